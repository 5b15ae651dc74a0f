export { type MissedReason, Outlet, type OutletLimits, OutletReader, type OutletSink } from './outlet.js';
export { type OutletClientStatus, OutletPort } from './outlet-port.js';
export {
  type BatchConsumer,
  RecordFeed,
  type UnreceivedConsumer,
  type UnreceivedRecords,
} from './record-feed.js';
export { admitsLink, matchesRecord, type RecordMatch, recordMatcher } from './record-match.js';
export { type ByteChunk, type SendCounters, socketSink } from './socket-sink.js';
