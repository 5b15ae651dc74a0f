export { TraceBoxCounters } from './tracebox-counters.js';
export { type TraceBoxOption, takeTraceBoxOption } from './tracebox-option.js';
export {
  type TraceBoxClientStatus,
  TraceBoxOutput,
  type TraceBoxOutputOptions,
  type TraceBoxOutputStatus,
} from './tracebox-output.js';
