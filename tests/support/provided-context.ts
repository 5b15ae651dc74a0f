// What the global setup hands to every test file (vitest's provide/inject), typed. Kept in a
// module of its own that both sides import, so any program that sees the harness sees this.
declare module 'vitest' {
  export interface ProvidedContext {
    natsUrl: string;
    databaseUrl: string;
  }
}

export {};
