export { LinkBytesStore, type LinkBytesStoreOptions } from './link-bytes-store.js';
export { RecordStore, type RecordStoreOptions } from './record-store.js';
