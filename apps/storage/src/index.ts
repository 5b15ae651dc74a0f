export { RecordStore, type RecordStoreOptions } from './record-store.js';
