// BullMQ's side of scripts/bullmq-compare.sh (issue 22): no-op jobs/s through BullMQ, measured as
// dispatch-throughput measures ours (scheduler-bench's DispatchThroughput).
//
//   node scripts/bullmq/dispatch.mjs --port PORT [--tasks 50000] [--workers 4] [--concurrency 64]
//        [--inflight 2000] [--warmup N/10] [--warmup-rounds 1] [--host 127.0.0.1] [--queue dispatch]
//
// One node process holds the producer and the Workers, as one JVM holds our master, its workers
// and the harness. The producer calls queue.add once per job, the way the harness calls
// submitAsync once per task (one Lua script run each), with at most --inflight adds unanswered;
// addBulk would put a whole batch into one MULTI and is not what a client submitting one task at a
// time does. Submission therefore overlaps the drain: Workers take jobs while adds still go out.
// Each job carries a payload the size of our task spec (about 151 bytes of JSON) and a job id the
// caller chose (dt-m-0000000, as our task ids), and is kept after it completes
// (removeOnComplete/removeOnFail false), as ours keeps every task record. --workers Workers of
// --concurrency each (4 x 64 by default: our 4 in-process workers of 64 CPU slots) run a no-op
// processor. The time runs from the first add to the 'completed' event of the last job.
//
// Warm-up rounds of --warmup jobs run first on the same queue and Workers, uncounted, their
// records kept (ours keeps its warm-up tasks too). At the end the script checks that Redis holds
// every job as completed, none waiting, active, delayed or failed, and that the processor ran
// each job exactly once; then prints one JSON line:
//   {"name":"bullmq-dispatch","tasks":N,"jobs_per_s":...,"elapsed_ms":...,"concurrency":...,...}
import { Queue, Worker } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';

function parseArgs(argv) {
  const opts = {
    host: '127.0.0.1', port: 0, tasks: 50000, workers: 4, concurrency: 64, inflight: 2000,
    warmup: -1, warmupRounds: 1, queue: 'dispatch',
  };
  const names = {
    '--host': 'host', '--port': 'port', '--tasks': 'tasks', '--workers': 'workers',
    '--concurrency': 'concurrency', '--inflight': 'inflight', '--warmup': 'warmup',
    '--warmup-rounds': 'warmupRounds', '--queue': 'queue',
  };
  for (let i = 0; i < argv.length; i++) {
    const key = names[argv[i]];
    if (!key || i + 1 >= argv.length) {
      console.error(`dispatch.mjs: unknown option or missing value: ${argv[i]}`);
      console.error('usage: node dispatch.mjs --port PORT [--tasks N] [--workers W] [--concurrency C]'
        + ' [--inflight I] [--warmup N] [--warmup-rounds R] [--host H] [--queue NAME]');
      process.exit(2);
    }
    const value = argv[++i];
    opts[key] = (key === 'host' || key === 'queue') ? value : Number(value);
    if (key !== 'host' && key !== 'queue' && !Number.isInteger(opts[key])) {
      console.error(`dispatch.mjs: ${argv[i - 1]} needs an integer, was ${value}`);
      process.exit(2);
    }
  }
  if (!opts.port) {
    console.error('dispatch.mjs: --port is required');
    process.exit(2);
  }
  if (opts.warmup < 0) {
    opts.warmup = Math.max(1, Math.floor(opts.tasks / 10));
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const bullmqVersion = JSON.parse(readFileSync(new URL('./node_modules/bullmq/package.json', import.meta.url))).version;
const connection = { host: opts.host, port: opts.port };

// A job's data: the fields of a no-op task's spec as TaskSpec writes it (about 151 bytes of JSON).
const payload = {
  script: 'noop.py', parameters: {}, arguments: [], environment: {}, timeoutMs: 0,
  traceId: randomUUID(), owner: 'anonymous',
};
const jobOptions = { removeOnComplete: false, removeOnFail: false };

const queue = new Queue(opts.queue, { connection });
const started = new Map(); // job id -> times the processor ran it
let batch = null; // { prefix, expected, done, resolve, reject, lastNanos }

const workers = [];
for (let w = 0; w < opts.workers; w++) {
  const worker = new Worker(opts.queue, async (job) => {
    started.set(job.id, (started.get(job.id) || 0) + 1);
  }, { connection, concurrency: opts.concurrency });
  worker.on('completed', (job) => {
    const now = process.hrtime.bigint();
    if (batch && job.id.startsWith(batch.prefix) && ++batch.done === batch.expected) {
      batch.lastNanos = now;
      batch.resolve();
    }
  });
  worker.on('failed', (job, err) => batch && batch.reject(new Error(`job ${job && job.id} failed: ${err}`)));
  worker.on('error', (err) => batch && batch.reject(err));
  workers.push(worker);
}

function jobId(prefix, i) {
  return prefix + String(i).padStart(7, '0');
}

// Adds n jobs with ids prefix + i, at most opts.inflight unanswered, and returns the nanoseconds
// from the first add to the 'completed' event of the last job.
async function runBatch(prefix, n) {
  const done = new Promise((resolve, reject) => {
    batch = { prefix, expected: n, done: 0, resolve, reject, lastNanos: 0n };
  });
  let inflight = 0;
  let failure = null;
  let wake = null;
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    if (inflight >= opts.inflight) {
      await new Promise((resolve) => { wake = resolve; });
    }
    if (failure) {
      throw failure;
    }
    inflight++;
    queue.add('noop', payload, { ...jobOptions, jobId: jobId(prefix, i) }).then(
      () => { inflight--; if (wake) { const w = wake; wake = null; w(); } },
      (err) => { failure = failure || err; inflight--; if (wake) { const w = wake; wake = null; w(); } });
  }
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${prefix}: ${batch.done} of ${n} jobs completed within 120 s`)),
      120_000);
  });
  try {
    await Promise.race([done, timeout]);
  } finally {
    clearTimeout(timer);
  }
  if (failure) {
    throw failure;
  }
  return Number(batch.lastNanos - start);
}

async function verify(total, prefix, measured) {
  const problems = [];
  const counts = await queue.getJobCounts('completed', 'waiting', 'active', 'delayed', 'failed', 'prioritized',
    'waiting-children', 'paused');
  if (counts.completed !== total) {
    problems.push(`${counts.completed} jobs completed in Redis, expected ${total}`);
  }
  for (const [state, n] of Object.entries(counts)) {
    if (state !== 'completed' && n !== 0) {
      problems.push(`${n} jobs ${state}`);
    }
  }
  let repeated = 0;
  for (const times of started.values()) {
    if (times !== 1) {
      repeated++;
    }
  }
  if (repeated) {
    problems.push(`${repeated} jobs processed more than once`);
  }
  if (started.size !== total) {
    problems.push(`the processor ran ${started.size} distinct jobs, expected ${total}`);
  }
  for (let i = 0; i < measured; i++) {
    if (!started.has(jobId(prefix, i))) {
      problems.push(`job ${jobId(prefix, i)} never ran`);
      break;
    }
  }
  if (problems.length) {
    throw new Error(`the run was not correct: ${problems.join('; ')}`);
  }
}

async function main() {
  await queue.obliterate({ force: true }); // an empty queue even on a server the caller did not flush
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  const info = await (await queue.client).info('server');
  const redisVersion = (/redis_version:(\S+)/.exec(info) || [])[1];
  console.log(`# bullmq-dispatch: BullMQ ${bullmqVersion}, node ${process.version}, Redis ${redisVersion} at`
    + ` ${opts.host}:${opts.port}; ${opts.workers} Workers x concurrency ${opts.concurrency}, inflight ${opts.inflight}`);
  let warmedUp = 0;
  for (let round = 1; opts.warmup > 0 && round <= opts.warmupRounds; round++) {
    const t = await runBatch(`dt-w${round}-`, opts.warmup);
    warmedUp += opts.warmup;
    console.log(`# warm-up round ${round}: ${opts.warmup} jobs in ${(t / 1e9).toFixed(2)} s`
      + ` (${Math.round(opts.warmup / (t / 1e9))} jobs/s)`);
  }
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`# measurement starts at ${new Date().toISOString()}, load average ${load}`);
  const elapsed = await runBatch('dt-m-', opts.tasks);
  const rate = opts.tasks / (elapsed / 1e9);
  console.log(`# measured: ${opts.tasks} jobs in ${(elapsed / 1e9).toFixed(2)} s: ${Math.round(rate)} jobs/s`);
  // Closing the Workers stops their fetches, so that the counts below are final.
  await Promise.all(workers.map((w) => w.close()));
  await verify(warmedUp + opts.tasks, 'dt-m-', opts.tasks);
  console.log(`# checked: ${warmedUp + opts.tasks} jobs completed in Redis, each processed exactly once`);
  await queue.close();
  console.log(JSON.stringify({
    name: 'bullmq-dispatch', tasks: opts.tasks, jobs_per_s: Math.round(rate * 10) / 10,
    elapsed_ms: Math.round(elapsed / 1e5) / 10, workers: opts.workers, concurrency: opts.concurrency,
    inflight: opts.inflight, warmup_jobs: warmedUp, bullmq: bullmqVersion, node: process.version,
    redis: redisVersion, load_average_before: load,
  }));
}

main().then(() => process.exit(0), (err) => {
  console.error(`bullmq-dispatch FAILED: ${err && err.stack || err}`);
  process.exit(1);
});
