// The one record filter lives in @tracehub/contracts (stored-records queries use it too); the
// live readers take it from here as they always have.
export { admitsLink, matchesRecord, type RecordMatch, recordMatcher } from '@tracehub/contracts';
