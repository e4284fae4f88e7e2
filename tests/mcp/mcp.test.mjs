// `bk mcp` driven by the official MCP TypeScript SDK client over stdio, on a
// private ledger with 8 count-only GPUs and a fixed clock. The SDK validates
// every structuredContent against the tool's outputSchema by itself, so each
// successful call below is also a schema check.
//
// Run: cd tests/mcp && npm ci && BK_BIN=/path/to/bk node --test

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import Ajv from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const BK = process.env.BK_BIN;
assert.ok(BK, 'set BK_BIN to the bk binary');

const dataDir = mkdtempSync(join(tmpdir(), 'bk-mcp-test-'));
const bkEnv = {
  BK_DATA_DIR: dataDir,
  BK_GPU_COUNT: '8',
  BK_TEST_NOW: '2026-11-29T18:49:00Z',
  TZ: 'UTC',
  // Private job specs and logs of scheduled commands.
  BK_JOB_DIR: join(dataDir, 'jobs'),
  // No cluster catalog, whatever this machine has: the cluster tools stay out.
  BK_CLUSTER_CONFIG: join(dataDir, 'no-cluster.json'),
};

let client;
let transport;
let initializeMs;

before(async () => {
  transport = new StdioClientTransport({ command: BK, args: ['mcp'], env: bkEnv, stderr: 'pipe' });
  client = new Client({ name: 'gpubk-tests', version: '1.0.0' });
  const t0 = performance.now();
  await client.connect(transport);
  initializeMs = performance.now() - t0;
});

after(async () => {
  await client?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function structured(result) {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  assert.equal(result.structuredContent.schema_version, 'bk.agent.v1');
  // The same document as JSON text, for clients that only read text.
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result.structuredContent;
}

// get_my_gpu_usage's document is the usage API's, not bk.agent.v1.
function usageDoc(result) {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  assert.equal(result.structuredContent.schema_version, 'gpubk.usage.v1');
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result.structuredContent;
}

function errorText(result) {
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.equal(result.structuredContent, undefined);
  return result.content[0].text;
}

async function stillServing() {
  assert.deepEqual(await client.ping(), {});
}

test('initialize: server identity, version, capabilities', (t) => {
  t.diagnostic(`connect (spawn + initialize) took ${initializeMs.toFixed(1)} ms`);
  assert.equal(client.getServerVersion().name, 'GPUBK');
  const caps = client.getServerCapabilities();
  assert.ok(caps.tools && caps.resources && caps.prompts);
  assert.match(client.getInstructions(), /operation_id/);
});

test('tools/list: every schema is a valid JSON Schema object; annotations are set', async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  // Exactly the local tools: without a catalog no cluster tool is offered.
  assert.deepEqual(names, [
    'get_gpu_context',
    'recommend_gpu_booking',
    'create_gpu_booking',
    'list_gpu_reservations',
    'get_my_gpu_usage',
    'edit_my_gpu_booking',
    'renew_my_gpu_booking',
    'cancel_my_gpu_booking',
    'cleanup_my_job_specs',
    'cleanup_my_job_logs',
    'read_my_job_log',
    'get_my_gpu_operation',
  ]);
  // Strict Ajv with meta-schema validation: unknown keywords or malformed
  // schemas fail here even though the SDK itself is lenient.
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, validateSchema: true, allErrors: true });
  for (const tool of tools) {
    for (const key of ['inputSchema', 'outputSchema']) {
      const schema = tool[key];
      assert.equal(schema.type, 'object', `${tool.name} ${key}`);
      assert.ok(ajv.validateSchema(schema), `${tool.name} ${key}: ${ajv.errorsText(ajv.errors)}`);
      assert.doesNotThrow(() => ajv.compile(schema), `${tool.name} ${key}`);
    }
    const a = tool.annotations;
    for (const hint of ['readOnlyHint', 'idempotentHint', 'destructiveHint']) {
      assert.equal(typeof a[hint], 'boolean', `${tool.name} ${hint}`);
    }
    assert.equal(typeof tool.description, 'string');
  }
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.equal(byName.get_gpu_context.annotations.readOnlyHint, true);
  assert.equal(byName.create_gpu_booking.annotations.readOnlyHint, false);
  assert.equal(byName.create_gpu_booking.annotations.idempotentHint, true);
  assert.equal(byName.cancel_my_gpu_booking.annotations.destructiveHint, true);
  assert.deepEqual(byName.create_gpu_booking.inputSchema.required, ['count', 'duration', 'operation_id']);
  assert.deepEqual(byName.renew_my_gpu_booking.inputSchema.required, ['reservation_id', 'duration', 'operation_id']);

  // The tools for usage history and scheduled commands, with the original's annotation presets.
  const hints = (name) => {
    const { readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = byName[name].annotations;
    return { readOnlyHint, destructiveHint, idempotentHint, openWorldHint };
  };
  const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  const cleanup = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
  assert.deepEqual(hints('get_my_gpu_usage'), readOnly);
  assert.deepEqual(hints('read_my_job_log'), readOnly);
  assert.deepEqual(hints('cleanup_my_job_specs'), cleanup);
  assert.deepEqual(hints('cleanup_my_job_logs'), cleanup);
  const usage = byName.get_my_gpu_usage.inputSchema;
  assert.deepEqual(Object.keys(usage.properties), ['include_events', 'limit', 'resolution', 'since']);
  assert.equal(usage.required, undefined);
  assert.equal(usage.properties.since.default, '24h');
  assert.equal(usage.properties.resolution.default, 'auto');
  assert.equal(usage.properties.include_events.default, false);
  assert.equal(usage.properties.limit.default, 1000);
  assert.equal(byName.get_my_gpu_usage.outputSchema.properties.schema_version.const, 'gpubk.usage.v1');
  const log = byName.read_my_job_log.inputSchema;
  assert.deepEqual(log.required, ['reservation_id']);
  assert.equal(log.properties.max_chars.type, 'integer');
  assert.equal(log.properties.max_chars.default, 32000);
  for (const name of ['cleanup_my_job_specs', 'cleanup_my_job_logs']) {
    assert.deepEqual(byName[name].inputSchema.properties, {}, name);
  }
  const create = byName.create_gpu_booking.inputSchema.properties;
  assert.deepEqual(create.command.type, 'array');
  assert.deepEqual(create.command.items.type, 'string');
  assert.equal(create.working_directory.type, 'string');
});

test('context, recommend, book, replay, list, edit, renew, cancel', async () => {
  const ctx = structured(await client.callTool({ name: 'get_gpu_context', arguments: {} }));
  assert.equal(ctx.kind, 'context');
  assert.equal(ctx.deployment, 'private');
  assert.equal(ctx.policy.gpu_count, 8);
  assert.equal(ctx.policy.host_cpus, null);
  assert.deepEqual(ctx.announcements, []); // no administrator announcement in this ledger

  const rec = structured(
    await client.callTool({
      name: 'recommend_gpu_booking',
      arguments: { count: 1, duration: '2h', gpus: [1], expected_memory: '24g', cpus: 4, ram: '32g' },
    }),
  );
  assert.equal(rec.kind, 'recommendation');
  assert.equal(rec.available, true);
  assert.deepEqual(rec.recommendation.gpus, [1]);

  const args = {
    count: 1,
    duration: '2h',
    gpus: [1],
    expected_memory: '24g',
    cpus: 4,
    ram: '32g',
    operation_id: 'experiment-001',
  };
  const booked = structured(await client.callTool({ name: 'create_gpu_booking', arguments: args }));
  assert.equal(booked.kind, 'booking_result');
  assert.equal(booked.status, 'created');
  assert.deepEqual(booked.reservation.gpus, [1]);
  assert.equal(booked.reservation.expected_memory_mb_per_gpu, 24576);
  assert.equal(booked.reservation.cpus, 4);
  assert.equal(booked.reservation.ram_mb, 32768);
  const id = booked.reservation.id;

  // An exact retry replays: same reservation, nothing booked twice.
  const replay = structured(await client.callTool({ name: 'create_gpu_booking', arguments: args }));
  assert.equal(replay.status, 'exists');
  assert.equal(replay.reservation.id, id);
  assert.equal(replay.allocator.source, 'idempotent-replay');
  // The same ID for a different write is refused.
  assert.match(
    errorText(await client.callTool({ name: 'create_gpu_booking', arguments: { ...args, duration: '3h' } })),
    /different write/,
  );

  const mine = structured(await client.callTool({ name: 'list_gpu_reservations', arguments: { mine_only: true } }));
  assert.equal(mine.kind, 'reservations');
  assert.deepEqual(
    mine.reservations.map((r) => r.id),
    [id],
  );

  const edited = structured(
    await client.callTool({
      name: 'edit_my_gpu_booking',
      arguments: { reservation_id: id.slice(0, 8), operation_id: 'edit-001', duration: '3h' },
    }),
  );
  assert.equal(edited.status, 'updated');
  assert.equal(edited.reservation.end_at, '2026-11-29T21:45:00Z');
  const editReplay = structured(
    await client.callTool({
      name: 'edit_my_gpu_booking',
      arguments: { reservation_id: id.slice(0, 8), operation_id: 'edit-001', duration: '3h' },
    }),
  );
  assert.equal(editReplay.status, 'exists');

  const renewed = structured(
    await client.callTool({
      name: 'renew_my_gpu_booking',
      arguments: { reservation_id: id, duration: '30m', operation_id: 'renew-001' },
    }),
  );
  assert.equal(renewed.reservation.end_at, '2026-11-29T22:15:00Z');
  const renewReplay = structured(
    await client.callTool({
      name: 'renew_my_gpu_booking',
      arguments: { reservation_id: id, duration: '30m', operation_id: 'renew-001' },
    }),
  );
  assert.equal(renewReplay.status, 'exists');
  assert.equal(renewReplay.reservation.end_at, '2026-11-29T22:15:00Z', 'a replayed renewal extends nothing');

  const op = structured(await client.callTool({ name: 'get_my_gpu_operation', arguments: { operation_id: 'renew-001' } }));
  assert.equal(op.found, true);
  assert.equal(op.action, 'renew');
  assert.equal(op.reservation.id, id);

  const cancelled = structured(
    await client.callTool({ name: 'cancel_my_gpu_booking', arguments: { reservation_id: id, operation_id: 'cancel-001' } }),
  );
  assert.equal(cancelled.kind, 'cancellation_result');
  assert.equal(cancelled.reservation.status, 'cancelled');
  const cancelReplay = structured(
    await client.callTool({ name: 'cancel_my_gpu_booking', arguments: { reservation_id: id, operation_id: 'cancel-001' } }),
  );
  assert.equal(cancelReplay.reservation.id, id);

  const after = structured(await client.callTool({ name: 'list_gpu_reservations', arguments: {} }));
  assert.deepEqual(after.reservations, []);
});

test('exclusive booking blocks an exact overlapping recommendation', async () => {
  structured(
    await client.callTool({
      name: 'create_gpu_booking',
      arguments: { count: 1, duration: '1h', gpus: [5], mode: 'exclusive', operation_id: 'bench-gpu5' },
    }),
  );
  const rec = structured(
    await client.callTool({
      name: 'recommend_gpu_booking',
      arguments: { count: 1, duration: '30m', gpus: [5], start: '2026-11-29T19:00:00Z' },
    }),
  );
  assert.equal(rec.available, false);
  assert.equal(rec.recommendation, null);
  assert.deepEqual(rec.nearest_available.gpus, [5]);
});

test('fair-share limits: a recommendation waits for them and a booking beyond them is refused', async () => {
  // A second server on its own ledger, where each user may hold one GPU at once.
  const limitedDir = mkdtempSync(join(tmpdir(), 'bk-mcp-limits-'));
  const limited = new Client({ name: 'gpubk-tests-limits', version: '1.0.0' });
  await limited.connect(
    new StdioClientTransport({
      command: BK,
      args: ['mcp'],
      env: { ...bkEnv, BK_DATA_DIR: limitedDir, BK_JOB_DIR: join(limitedDir, 'jobs'), BK_USER_MAX_GPUS: '1' },
      stderr: 'pipe',
    }),
  );
  try {
    structured(
      await limited.callTool({
        name: 'create_gpu_booking',
        arguments: { count: 1, duration: '1h', operation_id: 'limits-first' },
      }),
    );
    const rec = structured(
      await limited.callTool({ name: 'recommend_gpu_booking', arguments: { count: 1, duration: '30m' } }),
    );
    assert.equal(rec.available, true);
    assert.equal(rec.recommendation.start_at, '2026-11-29T19:45:00Z'); // when the first one ends
    const refused = errorText(
      await limited.callTool({
        name: 'create_gpu_booking',
        arguments: { count: 1, duration: '30m', start: '2026-11-29T18:45:00Z', operation_id: 'limits-second' },
      }),
    );
    assert.match(refused, /fair-share limit user_max_gpus: .* may hold at most 1 GPU\(s\) at once; holds 1/);
  } finally {
    await limited.close();
    rmSync(limitedDir, { recursive: true, force: true });
  }
});

test('bad arguments are isError results and the server keeps answering', async () => {
  const cases = [
    ['create_gpu_booking', { count: 1, duration: '1h' }, /operation_id is required/],
    ['create_gpu_booking', { count: 1, duration: '1h', operation_id: '' }, /operation_id is required/],
    ['create_gpu_booking', { count: 1, duration: '1h', operation_id: 'bad id!' }, /op/i],
    ['create_gpu_booking', { count: 1, duration: '1h', operation_id: 'x', command: 'nvidia-smi -L' }, /command must be a non-empty argv list/],
    ['create_gpu_booking', { count: 1, duration: '1h', operation_id: 'x', command: [] }, /command must be a non-empty argv list/],
    ['create_gpu_booking', { count: 1, duration: '1h', operation_id: 'x', command: ['nvidia-smi'], working_directory: 'runs' }, /job working directory must be absolute/],
    ['create_gpu_booking', { count: 1, duration: '1h', operation_id: 'x', command: ['nvidia-smi'], working_directory: '/no/such/dir' }, /job working directory does not exist: \/no\/such\/dir/],
    ['get_my_gpu_usage', { limit: 0 }, /limit must be between 1 and 200000/],
    ['get_my_gpu_usage', { resolution: '7s' }, /resolution must be auto, 1m, 5m, 10m, 1h or 1d/],
    ['get_my_gpu_usage', { uid: 0 }, /unknown argument: uid/],
    ['read_my_job_log', { reservation_id: 'ffffffff', max_chars: 0 }, /max_chars must be between 1 and 128000/],
    ['read_my_job_log', { reservation_id: 'ffffffff', max_chars: 128001 }, /max_chars must be between 1 and 128000/],
    ['read_my_job_log', { reservation_id: 'ffffffff' }, /reservation not found for current UID/],
    ['get_my_gpu_usage', { since: 'soon' }, /duration/],
    ['get_my_gpu_usage', { include_events: 'yes' }, /include_events must be true or false/],
    ['read_my_job_log', { reservation_id: '' }, /reservation ID is required/],
    ['read_my_job_log', { max_chars: 10 }, /missing required argument: reservation_id/],
    ['cleanup_my_job_specs', { force: true }, /unknown argument: force; cleanup_my_job_specs accepts: no arguments/],
    ['cleanup_my_job_logs', { older_than: '7d' }, /unknown argument: older_than; cleanup_my_job_logs accepts: no arguments/],
    ['recommend_gpu_booking', { count: 'two', duration: '1h' }, /count must be an integer/],
    ['recommend_gpu_booking', { count: 1, duration: '7m' }, /multiple of 5 minutes/],
    ['recommend_gpu_booking', { count: 99, duration: '1h' }, /GPU count must be between 1 and 8/],
    ['recommend_gpu_booking', { count: 1, duration: '1h', mode: 'turbo' }, /mode must be s\/shared or x\/exclusive/],
    ['recommend_gpu_booking', { count: 1, duration: '1h', gpus: [1], exclude_gpus: [2] }, /mutually exclusive/],
    ['recommend_gpu_booking', { count: 1, duration: '1h', gpus: [-1] }, /gpus must be a list of GPU indexes/],
    ['recommend_gpu_booking', { count: 1, duration: '1h', expected_memory: 'lots' }, /expected_memory/],
    ['recommend_gpu_booking', { count: 1, duration: '1h', uid: 0 }, /unknown argument: uid/],
    ['edit_my_gpu_booking', { reservation_id: 'abc', operation_id: 'e', allow_queue: true }, /at least one changed field/],
    ['edit_my_gpu_booking', { reservation_id: 'abc', operation_id: 'e', count: 0 }, /GPU count must be >= 1/],
    ['edit_my_gpu_booking', { reservation_id: 'ffffffff', operation_id: 'e', duration: '1h' }, /not found for current user/],
    ['renew_my_gpu_booking', { reservation_id: 'ffffffff', duration: '30m' }, /operation_id is required/],
    ['cancel_my_gpu_booking', { reservation_id: 'ffffffff' }, /not found for current user/],
    ['get_my_gpu_operation', { operation_id: '' }, /operation_id is required/],
  ];
  for (const [name, args, pattern] of cases) {
    const text = errorText(await client.callTool({ name, arguments: args }));
    assert.match(text, new RegExp(`^Error executing tool ${name}: `), text);
    assert.match(text, pattern, `${name} ${JSON.stringify(args)}: ${text}`);
    await stillServing();
  }
  // An unknown tool is a protocol error, not a dead server.
  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool/);
  await stillServing();
});

test('bk://context resource and plan_gpu_experiment prompt', async () => {
  const { resources } = await client.listResources();
  assert.deepEqual(
    resources.map((r) => r.uri),
    ['bk://context', 'bk://usage/me/recent'],
  );
  assert.equal(resources[1].description, "Current UID's versioned 24-hour usage summary.");
  const usage = await client.readResource({ uri: 'bk://usage/me/recent' });
  assert.equal(usage.contents[0].mimeType, 'application/json');
  const recent = JSON.parse(usage.contents[0].text);
  assert.equal(recent.schema_version, 'gpubk.usage.v1');
  assert.equal(recent.kind, 'my-usage');
  assert.equal(recent.samples.query.start_at, '2026-11-28T18:49:01Z');
  const read = await client.readResource({ uri: 'bk://context' });
  const doc = JSON.parse(read.contents[0].text);
  assert.equal(doc.kind, 'context');
  assert.equal(read.contents[0].mimeType, 'application/json');
  await assert.rejects(client.readResource({ uri: 'bk://nothing' }));

  const { prompts } = await client.listPrompts();
  assert.deepEqual(
    prompts.map((p) => p.name),
    ['plan_gpu_experiment'],
  );
  const prompt = await client.getPrompt({
    name: 'plan_gpu_experiment',
    arguments: { count: '2', duration: '4h', expected_memory: '24g' },
  });
  assert.equal(prompt.messages[0].role, 'user');
  assert.match(prompt.messages[0].content.text, /2 GPU\(s\) for 4h, expected memory 24g per GPU/);
  assert.match(prompt.messages[0].content.text, /recommend_gpu_booking/);
});

test('get_my_gpu_usage: this UID only, versioned, events on request', async () => {
  const uid = process.getuid();
  const doc = usageDoc(await client.callTool({ name: 'get_my_gpu_usage', arguments: {} }));
  assert.equal(doc.kind, 'my-usage');
  assert.equal(doc.generated_at, '2026-11-29T18:49:00Z');
  assert.equal(doc.summary.kind, 'usage-users');
  assert.equal(doc.summary.query.uid, uid);
  assert.equal(doc.samples.kind, 'usage-samples');
  assert.equal(doc.samples.query.uid, uid);
  assert.equal(doc.samples.query.resolution_seconds, 60);
  assert.equal(doc.events, undefined);

  const wide = usageDoc(
    await client.callTool({ name: 'get_my_gpu_usage', arguments: { since: '7d', include_events: true, limit: 20000 } }),
  );
  assert.equal(wide.samples.query.resolution_seconds, 3600);
  assert.equal(wide.samples.query.limit, 20000);
  assert.equal(wide.events.kind, 'usage-events');
  assert.equal(wide.events.query.uid, uid);
  assert.equal(wide.events.query.limit, 5000);
});

test('create_gpu_booking with a command: a pending job bk j lists, its log, and the cleanups', async () => {
  const booked = structured(
    await client.callTool({
      name: 'create_gpu_booking',
      arguments: {
        count: 1,
        duration: '1h',
        start: '2026-11-29T21:00:00Z',
        operation_id: 'train-001',
        command: ['python', 'train.py', '--epochs', '3'],
        working_directory: dataDir,
      },
    }),
  );
  assert.equal(booked.status, 'created');
  assert.equal(booked.worker.schema_version, 'gpubk.worker.v1');
  const id = booked.reservation.id;

  // The command line sees the same job, waiting for its start.
  const jobs = JSON.parse(execFileSync(BK, ['j', '--json'], { env: { ...bkEnv, PATH: process.env.PATH } }));
  const job = jobs.jobs.find((j) => j.id === id);
  assert.ok(job, JSON.stringify(jobs));
  assert.equal(job.job.status, 'pending');
  assert.equal(job.job.summary, 'python train.py (+2 args)');

  const noLog = structured(await client.callTool({ name: 'read_my_job_log', arguments: { reservation_id: id.slice(0, 8) } }));
  assert.equal(noLog.kind, 'job_log');
  assert.equal(noLog.reservation_id, id);
  assert.equal(noLog.status, 'pending');
  assert.equal(noLog.available, false);
  assert.equal(noLog.segments, 0);
  assert.equal(noLog.text, '');

  // What the worker would have written: a private 0600 log.
  const logPath = join(dataDir, 'jobs', `${id}.log`);
  writeFileSync(logPath, 'header\nepoch 1 loss 0.5\nepoch 2 loss 0.25\n', { mode: 0o600 });
  chmodSync(logPath, 0o600);
  const tail = structured(await client.callTool({ name: 'read_my_job_log', arguments: { reservation_id: id, max_chars: 18 } }));
  assert.equal(tail.available, true);
  assert.equal(tail.segments, 1);
  assert.equal(tail.text, 'epoch 2 loss 0.25\n');
  assert.equal(tail.truncated_to_chars, 18);

  const specs = structured(await client.callTool({ name: 'cleanup_my_job_specs', arguments: {} }));
  assert.equal(specs.kind, 'job-spec-cleanup');
  assert.equal(specs.private_job_cleanup.failed, 0);
  assert.equal(specs.private_job_cleanup.removed, 0, 'a pending job keeps its spec');
  const logs = structured(await client.callTool({ name: 'cleanup_my_job_logs', arguments: {} }));
  assert.equal(logs.kind, 'job-log-cleanup');
  assert.equal(logs.private_job_log_cleanup.failed, 0);
  assert.equal(typeof logs.private_job_log_cleanup.bytes_retained, 'number');

  // Cancelling removes the private spec at once, as `bk d` does: nothing is
  // left for the next cleanup.
  const specsDir = join(dataDir, 'jobs', 'specs');
  assert.equal(readdirSync(specsDir).length, 1, 'the pending job has its spec');
  const cancelled = structured(await client.callTool({ name: 'cancel_my_gpu_booking', arguments: { reservation_id: id } }));
  assert.equal(cancelled.warning, null);
  assert.deepEqual(readdirSync(specsDir), []);
  const after = structured(await client.callTool({ name: 'cleanup_my_job_specs', arguments: {} }));
  assert.equal(after.private_job_cleanup.removed, 0, JSON.stringify(after));
});

// The wire itself, below the SDK: framing, protocol errors, the stateless revision.
function rawServer() {
  const child = spawn(BK, ['mcp'], { env: { ...bkEnv, PATH: process.env.PATH }, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = createInterface({ input: child.stdout });
  const pending = [];
  const queued = [];
  lines.on('line', (l) => (pending.length ? pending.shift()(l) : queued.push(l)));
  return {
    child,
    send(text) {
      child.stdin.write(text + '\n');
    },
    next() {
      return queued.length ? Promise.resolve(queued.shift()) : new Promise((r) => pending.push(r));
    },
    async request(msg) {
      this.send(JSON.stringify(msg));
      return JSON.parse(await this.next());
    },
  };
}

test('raw stdio: malformed JSON, unknown methods, notifications, EOF', async () => {
  const s = rawServer();
  s.send('{"jsonrpc":"2.0","id":1,"method":');
  const parse = JSON.parse(await s.next());
  assert.equal(parse.error.code, -32700);
  assert.equal(parse.id, null);
  assert.equal((await s.request({ jsonrpc: '2.0', id: 2, method: 'tools/frobnicate' })).error.code, -32601);
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}'); // no reply
  const init = await s.request({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  assert.equal(init.id, 0);
  assert.equal(init.result.protocolVersion, '2025-03-26');
  const old = await s.request({ jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: '2024-11-05' } });
  assert.equal(old.result.protocolVersion, '2025-11-25');
  assert.deepEqual((await s.request({ jsonrpc: '2.0', id: 4, method: 'ping' })).result, {});

  const exit = new Promise((resolve) => s.child.on('exit', (code) => resolve(code)));
  s.child.stdin.end();
  assert.equal(await exit, 0, 'bk mcp exits 0 on stdin EOF');
});

test('raw stdio: the stateless 2026-07-28 revision', async () => {
  const s = rawServer();
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  };
  const discover = await s.request({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } });
  assert.equal(discover.result.resultType, 'complete');
  assert.deepEqual(discover.result.supportedVersions, ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']);
  assert.equal(discover.result._meta['io.modelcontextprotocol/serverInfo'].name, 'GPUBK');
  assert.equal(typeof discover.result.ttlMs, 'number');
  assert.ok(['public', 'private'].includes(discover.result.cacheScope));

  // No initialize: each request stands alone.
  const list = await s.request({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta } });
  assert.equal(list.result.resultType, 'complete');
  assert.equal(list.result.tools.length, 12);
  const call = await s.request({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { _meta: meta, name: 'get_gpu_context', arguments: {} },
  });
  assert.equal(call.result.structuredContent.kind, 'context');
  assert.equal(call.result.resultType, 'complete');

  const bad = await s.request({
    jsonrpc: '2.0',
    id: 4,
    method: 'tools/list',
    params: { _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '1900-01-01' } },
  });
  assert.equal(bad.error.code, -32022);
  assert.equal(bad.error.data.requested, '1900-01-01');
  assert.ok(bad.error.data.supported.includes('2026-07-28'));

  const exit = new Promise((resolve) => s.child.on('exit', (code) => resolve(code)));
  s.child.stdin.end();
  assert.equal(await exit, 0);
});

// The cluster tools, with this host as the catalog's only node (`local`: the
// real bk run as a child, as on a cluster) in its own data directory.
test('cluster tools: offered with a catalog; context, recommend, book, retry, cancel on gpu-a', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bk-mcp-cluster-'));
  const env = {
    BK_DATA_DIR: join(dir, 'data'),
    BK_GPU_COUNT: '4',
    BK_TEST_NOW: '2026-11-29T18:49:00Z',
    TZ: 'UTC',
    BK_CLUSTER_CONFIG: join(dir, 'cluster.json'),
    BK_JOB_DIR: join(dir, 'jobs'),
  };
  execFileSync(BK, ['admin', 'cluster', 'init', 'gpu-a', '--yes'], { env: { ...env, PATH: process.env.PATH } });
  const t = new StdioClientTransport({ command: BK, args: ['mcp'], env, stderr: 'pipe' });
  const c = new Client({ name: 'gpubk-cluster-tests', version: '1.0.0' });
  await c.connect(t);
  const clusterDoc = (result, kind) => {
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    assert.equal(result.structuredContent.schema_version, 'gpubk.cluster.v1');
    assert.equal(result.structuredContent.kind, kind);
    assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
    return result.structuredContent;
  };
  try {
    const { tools } = await c.listTools();
    const clusterTools = [
      'get_gpu_cluster_context',
      'check_gpu_cluster_readiness',
      'recommend_cluster_gpu_booking',
      'create_cluster_gpu_booking',
      'get_my_cluster_gpu_usage',
      'edit_my_cluster_gpu_booking',
      'cancel_my_cluster_gpu_booking',
    ];
    assert.deepEqual(tools.map((x) => x.name).slice(-7), clusterTools);
    assert.equal(tools.length, 12 + 7);
    const ajv = new Ajv({ strict: true, allowUnionTypes: true, validateSchema: true, allErrors: true });
    const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
    for (const name of clusterTools) {
      for (const key of ['inputSchema', 'outputSchema']) {
        assert.ok(ajv.validateSchema(byName[name][key]), `${name} ${key}: ${ajv.errorsText(ajv.errors)}`);
        assert.doesNotThrow(() => ajv.compile(byName[name][key]), `${name} ${key}`);
      }
    }
    assert.equal(byName.get_gpu_cluster_context.annotations.readOnlyHint, true);
    assert.equal(byName.create_cluster_gpu_booking.annotations.readOnlyHint, false);
    assert.equal(byName.create_cluster_gpu_booking.annotations.idempotentHint, true);
    assert.deepEqual(byName.create_cluster_gpu_booking.inputSchema.required, ['count', 'duration', 'operation_id']);

    const ctx = clusterDoc(await c.callTool({ name: 'get_gpu_cluster_context', arguments: {} }), 'cluster-context');
    assert.equal(ctx.nodes.length, 1);
    assert.equal(ctx.nodes[0].name, 'gpu-a');
    assert.equal(ctx.nodes[0].available, true, JSON.stringify(ctx.nodes[0]));
    assert.equal(ctx.nodes[0].context.kind, 'context');

    const ready = clusterDoc(await c.callTool({ name: 'check_gpu_cluster_readiness', arguments: {} }), 'cluster-check');
    assert.equal(ready.ready, true, JSON.stringify(ready.nodes));

    const want = { count: 2, duration: '1h', mode: 's' };
    const rec = clusterDoc(
      await c.callTool({ name: 'recommend_cluster_gpu_booking', arguments: want }),
      'cluster-recommendation',
    );
    assert.equal(rec.selected_node, 'gpu-a');
    assert.equal(rec.selected_write_compatible, true);

    // A job word such as --json stays the job's: it goes after `--`.
    const args = { ...want, operation_id: 'cluster-001', command: ['true', '--json'] };
    const booked = clusterDoc(
      await c.callTool({ name: 'create_cluster_gpu_booking', arguments: args }),
      'cluster-booking-result',
    );
    assert.equal(booked.node.name, 'gpu-a');
    assert.equal(booked.operation_id, 'cluster-001');
    assert.equal(booked.result.status, 'created');
    const res = booked.result.reservation;
    assert.equal(res.gpus.length, 2);
    // An exact retry finds the first try on the same host: nothing is booked twice.
    const replay = clusterDoc(
      await c.callTool({ name: 'create_cluster_gpu_booking', arguments: args }),
      'cluster-booking-result',
    );
    assert.equal(replay.node.name, 'gpu-a');
    assert.equal(replay.result.reservation.id, res.id);
    const after = clusterDoc(await c.callTool({ name: 'get_gpu_cluster_context', arguments: {} }), 'cluster-context');
    assert.deepEqual(
      after.nodes[0].context.reservations.map((r) => r.id),
      [res.id],
    );

    const usage = clusterDoc(await c.callTool({ name: 'get_my_cluster_gpu_usage', arguments: { since: '2h' } }), 'cluster-usage');
    assert.equal(usage.nodes[0].name, 'gpu-a');

    // Refused before anything runs.
    const bad = await c.callTool({
      name: 'edit_my_cluster_gpu_booking',
      arguments: { reservation_id: res.short_id, operation_id: 'e1', duration: '2h' },
    });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /use a node-qualified reservation ID such as gpu-a\/1a2b3c/);
    const noop = await c.callTool({
      name: 'edit_my_cluster_gpu_booking',
      arguments: { reservation_id: `gpu-a/${res.short_id}`, operation_id: 'e1' },
    });
    assert.match(noop.content[0].text, /cluster edit requires at least one changed field/);
    // A host's refusal comes back as one clean line.
    const tooMany = await c.callTool({ name: 'recommend_cluster_gpu_booking', arguments: { count: 9, duration: '1h' } });
    assert.equal(tooMany.isError, true);
    assert.equal(
      tooMany.content[0].text,
      'Error executing tool recommend_cluster_gpu_booking: cluster request failed: ' +
        'no cluster node can satisfy this request (gpu-a: GPU count must be between 1 and 4)',
    );
    const missing = await c.callTool({
      name: 'cancel_my_cluster_gpu_booking',
      arguments: { reservation_id: 'gpu-z/ffff', operation_id: 'c0' },
    });
    assert.equal(missing.isError, true);
    assert.match(missing.content[0].text, /^Error executing tool cancel_my_cluster_gpu_booking: cluster request failed: no cluster node named 'gpu-z'/);

    const cancel = { reservation_id: `gpu-a/${res.short_id}`, operation_id: 'cluster-cancel-001' };
    const cancelled = clusterDoc(
      await c.callTool({ name: 'cancel_my_cluster_gpu_booking', arguments: cancel }),
      'cluster-mutation-result',
    );
    assert.equal(cancelled.node, 'gpu-a');
    assert.equal(cancelled.result.reservation.id, res.id);
    assert.equal(cancelled.result.reservation.status, 'cancelled');
    const again = clusterDoc(
      await c.callTool({ name: 'cancel_my_cluster_gpu_booking', arguments: cancel }),
      'cluster-mutation-result',
    );
    assert.equal(again.result.reservation.id, res.id);
  } finally {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
