// Process entry point.
export {};
