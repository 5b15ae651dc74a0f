import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount, createOperator, createUser, type KeyPair } from '@nats-io/nkeys';

/**
 * NATS decentralised auth (operator mode) made in-process, as `nsc` would make it: an operator,
 * an account signed by it with JetStream allowed (and the system account JetStream needs), and users signed by an account, each a JWT
 * signed with its issuer's nkey. `serverConfig` is the part of a nats-server config that trusts
 * the operator and preloads the account; `credsFile` writes a user's JWT and seed as NATS_CREDS
 * takes them.
 */
export class NatsOperator {
  private readonly operator = createOperator();
  readonly operatorJwt: string;
  private readonly account = createAccount();
  readonly accountJwt: string;
  // JetStream runs only with a system account (nats-server: "system account not setup").
  private readonly systemAccount = createAccount();
  private readonly systemAccountJwt: string;

  constructor(readonly name = 'tracehub') {
    this.operatorJwt = signedJwt(this.operator, this.operator.getPublicKey(), name, { type: 'operator', version: 2 });
    this.accountJwt = signedJwt(this.operator, this.account.getPublicKey(), name, {
      type: 'account',
      version: 2,
      // -1: no limit; JetStream is on for the account once it may store something.
      limits: {
        subs: -1,
        data: -1,
        payload: -1,
        imports: -1,
        exports: -1,
        wildcards: true,
        conn: -1,
        leaf: -1,
        mem_storage: -1,
        disk_storage: -1,
        streams: -1,
        consumer: -1,
      },
      default_permissions: { pub: {}, sub: {} },
    });
    this.systemAccountJwt = signedJwt(this.operator, this.systemAccount.getPublicKey(), 'SYS', {
      type: 'account',
      version: 2,
    });
  }

  /** The nats-server config lines that trust this operator and know its accounts. */
  serverConfig(): string {
    const system = this.systemAccount.getPublicKey();
    return [
      `operator: ${this.operatorJwt}`,
      `system_account: ${system}`,
      'resolver: MEMORY',
      `resolver_preload: { ${this.account.getPublicKey()}: ${this.accountJwt}, ${system}: ${this.systemAccountJwt} }`,
    ].join('\n');
  }

  /**
   * Writes a credentials file for a new user `name` of this operator's account into `dir`; with
   * `signedBy: 'unknown account'` the user belongs to an account the server was never told of.
   */
  credsFile(dir: string, name: string, signedBy: 'account' | 'unknown account' = 'account'): string {
    const user = createUser();
    const issuer = signedBy === 'account' ? this.account : createAccount();
    const jwt = signedJwt(issuer, user.getPublicKey(), name, {
      type: 'user',
      version: 2,
      pub: {},
      sub: {},
      subs: -1,
      data: -1,
      payload: -1,
    });
    const file = join(dir, `${name}.creds`);
    writeFileSync(
      file,
      `-----BEGIN NATS USER JWT-----\n${jwt}\n------END NATS USER JWT------\n\n` +
        `-----BEGIN USER NKEY SEED-----\n${new TextDecoder().decode(user.getSeed())}\n------END USER NKEY SEED------\n`,
      { mode: 0o600 },
    );
    return file;
  }
}

/** A JWT as NATS reads them: ed25519-nkey signed, its `jti` the base32 SHA-512/256 of the claims. */
function signedJwt(issuer: KeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const claims: Record<string, unknown> = {
    jti: '',
    iat: Math.floor(Date.now() / 1000),
    iss: issuer.getPublicKey(),
    name,
    sub: subject,
    nats,
  };
  claims.jti = base32(createHash('sha512-256').update(JSON.stringify(claims)).digest());
  const header = base64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const body = `${header}.${base64url(JSON.stringify(claims))}`;
  return `${body}.${Buffer.from(issuer.sign(new TextEncoder().encode(body))).toString('base64url')}`;
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

/** RFC 4648 base32 without padding. */
function base32(bytes: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}
