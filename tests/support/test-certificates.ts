import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const makeCertsScript = fileURLToPath(new URL('../../infra/certs/make-certs.sh', import.meta.url));

export interface ServerCertificates {
  /** The CA's certificate (clients trust it) and key (signs client certificates). */
  ca: string;
  caKey: string;
  /** The server's certificate for localhost and 127.0.0.1, and its key. */
  cert: string;
  key: string;
}

/** A CA and a server certificate for localhost in `dir`, made by the script operators use (infra/certs/make-certs.sh). */
export function makeCertificates(dir: string): ServerCertificates {
  execFileSync('sh', [makeCertsScript, dir], { stdio: 'pipe' });
  return {
    ca: join(dir, 'ca.pem'),
    caKey: join(dir, 'ca.key'),
    cert: join(dir, 'server.pem'),
    key: join(dir, 'server.key'),
  };
}

/**
 * A client certificate for mutual TLS, named `name` and signed by the CA of `signedBy`, made
 * beside that CA: `<name>.pem` and `<name>.key`.
 */
export function makeClientCertificate(signedBy: ServerCertificates, name: string): { cert: string; key: string } {
  const [cert, key, csr, ext] = ['pem', 'key', 'csr', 'ext'].map((suffix) =>
    join(dirname(signedBy.ca), `${name}.${suffix}`),
  );
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', key, '-out', csr);
  writeFileSync(ext, 'extendedKeyUsage=clientAuth\n');
  openssl(
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    signedBy.ca,
    '-CAkey',
    signedBy.caKey,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    ext,
    '-out',
    cert,
  );
  return { cert, key };
}
