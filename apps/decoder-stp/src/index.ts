// Public surface of this package; filled in by its implementation.
export {};
