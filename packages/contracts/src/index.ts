export * from './codec.js';
export * from './decoded-record.js';
export * from './envelopes.js';
export * from './headers.js';
export * from './link-settings.js';
export * from './names.js';
export * from './problem.js';
export * from './record.js';
