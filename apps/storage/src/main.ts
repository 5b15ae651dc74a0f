// Process entry point of storage: one runService call; the writing lives in record-store.ts.
import { applyRetention, compactRecordBlocks, ensurePartitions } from '@tracehub/db';
import { connectServiceBus, connectServiceDb, ensureServiceStreams, runService } from '@tracehub/service-kit';
import { StorageConfigSchema } from './config.js';
import { LinkBytesStore } from './link-bytes-store.js';
import { RecordStore } from './record-store.js';

await runService({
  name: 'storage',
  configSchema: StorageConfigSchema,
  async start(service) {
    const { config, logger, metrics } = service;
    // Without Postgres nothing is stored: storage waits for it to answer before it starts
    // (records wait on the stream meanwhile), and is not ready while it is away later.
    const db = await connectServiceDb(service);
    const bus = await connectServiceBus(service);
    const partitionsAhead = () =>
      ensurePartitions(db, { from: new Date(Date.now() - 86_400_000), daysAhead: config.STORAGE_PARTITION_DAYS_AHEAD });
    // Retention drops whole days (records and link bytes), never rows.
    const retention = async () => {
      if (config.STORAGE_RETENTION_DAYS === 0) return;
      const result = await applyRetention(db, config.STORAGE_RETENTION_DAYS);
      if (result.dropped.length > 0 || result.sessions > 0)
        logger.info(
          { partitions: result.dropped, sessions: result.sessions, cutoff: result.cutoff },
          'retention applied',
        );
    };
    await retention();
    await ensureServiceStreams(service, bus);
    await partitionsAhead();
    const records = metrics.counter({ name: 'storage_records_total', help: 'records taken from the bus' });
    const inserted = metrics.counter({ name: 'storage_records_inserted_total', help: 'records that were new' });
    const batchSize = metrics.histogram({
      name: 'storage_batch_records',
      help: 'records per transaction',
      buckets: [1, 10, 100, 500, 1000, 2500, 5000, 10000, 50000],
    });
    const batchSeconds = metrics.histogram({
      name: 'storage_batch_seconds',
      help: 'time to write and commit a batch, retries included',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
    });
    const retries = metrics.counter({
      name: 'storage_write_retries_total',
      help: 'batch writes retried (Postgres away)',
    });
    // Lag: record messages not yet delivered to any storage, and delivered but not yet committed.
    metrics.gauge({
      name: 'storage_pending_messages',
      help: 'record messages waiting on the durable consumer (state: waiting | unacked)',
      labelNames: ['state'],
      async collect() {
        const info = await bus.jsm.consumers
          .info(bus.names.recStream, bus.names.storageConsumer)
          .catch(() => undefined);
        if (!info) return;
        this.set({ state: 'waiting' }, info.num_pending);
        this.set({ state: 'unacked' }, info.num_ack_pending);
      },
    });
    const droppedRecords = metrics.counter({
      name: 'storage_records_dropped_total',
      help: 'records dropped: refused by Postgres as data (each kept as a record loss of its session) or not a record batch at all',
      labelNames: ['reason'],
    });
    const droppedChunks = metrics.counter({
      name: 'storage_link_chunks_dropped_total',
      help: 'raw chunks dropped: unreadable, or refused by Postgres as data',
    });
    const store = new RecordStore({
      bus,
      db,
      batchRecords: config.STORAGE_BATCH_RECORDS,
      batchMs: config.STORAGE_BATCH_MS,
      maxInFlight: config.STORAGE_MAX_IN_FLIGHT,
      ackWaitMs: config.STORAGE_ACK_WAIT_MS,
      writers: config.STORAGE_WRITERS,
      log: logger,
      onDropped: (d) => droppedRecords.inc({ reason: d.reason }, d.records),
      onBatch: (b) => {
        records.inc(b.records);
        inserted.inc(b.inserted);
        batchSize.observe(b.records);
        batchSeconds.observe(b.ms / 1000);
        retries.inc(b.attempts - 1);
      },
    });
    metrics.gauge({
      name: 'storage_redelivered_messages',
      help: 'record messages JetStream delivered to this storage again (another storage died holding them)',
      collect() {
        this.set(store.stats.redelivered);
      },
    });
    const linkChunks = metrics.counter({ name: 'storage_link_chunks_total', help: 'raw chunks of links stored (new)' });
    const linkBytes = metrics.counter({ name: 'storage_link_bytes_total', help: 'bytes of links stored (new)' });
    const linkStore = new LinkBytesStore({
      bus,
      db,
      batchMs: config.STORAGE_LINK_BATCH_MS,
      ackWaitMs: config.STORAGE_ACK_WAIT_MS,
      log: logger,
      onDropped: () => droppedChunks.inc(),
      onBatch: (b) => {
        linkChunks.inc(b.stored);
        linkBytes.inc(b.bytes);
        retries.inc(b.attempts - 1);
      },
    });
    await store.start();
    await linkStore.start();
    // Partitions are made ahead and retention applied every ten minutes.
    const partitionTimer = setInterval(() => {
      partitionsAhead()
        .then(retention)
        .catch((err) => logger.warn({ err }, 'could not create partitions ahead or apply retention'));
    }, 600_000);
    partitionTimer.unref();
    // Small blocks (a slow link, a short batch) are merged once they have settled.
    const compacted = metrics.counter({
      name: 'storage_blocks_compacted_total',
      help: 'small record blocks merged into larger ones',
    });
    let compacting = false;
    const compactTimer =
      config.STORAGE_COMPACT_INTERVAL_MS > 0
        ? setInterval(() => {
            if (compacting) return;
            compacting = true;
            compactRecordBlocks(db, { targetRecords: config.STORAGE_COMPACT_RECORDS })
              .then((r) => compacted.inc(r.blocksBefore))
              .catch((err) => logger.warn({ err }, 'could not compact record blocks; will try again'))
              .finally(() => {
                compacting = false;
              });
          }, config.STORAGE_COMPACT_INTERVAL_MS)
        : undefined;
    compactTimer?.unref();
    return {
      stop: async () => {
        clearInterval(partitionTimer);
        if (compactTimer) clearInterval(compactTimer);
        await Promise.all([store.stop(), linkStore.stop()]);
      },
    };
  },
});
