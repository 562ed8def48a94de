// Checks the fake API server against a real client, @kubernetes/client-node's informer (pinned in
// tests/node/package.json): it must list, watch, see added/updated/deleted events, and relist
// after an in-stream ERROR 410 and after an HTTP 410, on namespaces and on resource.k8s.io/v1
// ResourceSlices. Usage: node node_informer_test.mjs --python /usr/bin/python3
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '../node/package.json'));
const k8s = await import(require.resolve('@kubernetes/client-node'));
const { version } = JSON.parse(
  readFileSync(join(here, '../node/node_modules/@kubernetes/client-node/package.json'), 'utf8'));

const python = process.argv.includes('--python')
  ? process.argv[process.argv.indexOf('--python') + 1] : '/usr/bin/python3';

const work = mkdtempSync(join(tmpdir(), 'node-informer-'));
const fake = spawn(python, [join(here, 'fake_apiserver.py'), '--tls-dir', join(work, 'tls'),
  '--token', 'node-token', '--bookmark-interval', '0.5', ...(process.env.FAKE_VERBOSE ? ['--verbose'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
const info = await new Promise((resolve, reject) => {
  createInterface(fake.stdout).once('line', (line) => resolve(JSON.parse(line)));
  fake.once('exit', (code) => reject(new Error(`fake API server exited (${code})`)));
});
const ca = readFileSync(info.ca);

function control(action, body = {}) {
  return new Promise((resolve, reject) => {
    const get = action === 'requests';
    const data = JSON.stringify(body);
    const req = request(`${info.server}/_fake/${action}`, {
      method: get ? 'GET' : 'POST', ca,
      headers: get ? {}
        : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) },
    }, (res) => {
      let text = '';
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text))
        : reject(new Error(`${action}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(get ? undefined : data);
  });
}

async function waitFor(what, condition, ms = 10000) {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

const namespaceObject = (name, labels = {}) =>
  ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const sliceObject = (name, node) => ({
  apiVersion: 'resource.k8s.io/v1', kind: 'ResourceSlice', metadata: { name },
  spec: { driver: 'gpu.example.com', nodeName: node,
    pool: { name: node, generation: 1, resourceSliceCount: 1 }, devices: [] },
});
const listsOf = async (path) =>
  (await control('requests')).filter((r) => r.path === path && !r.query.watch).length;

let failed = false;
try {
  const kubeconfig = new k8s.KubeConfig();
  kubeconfig.loadFromOptions({
    clusters: [{ name: 'fake', server: info.server, caData: ca.toString('base64') }],
    users: [{ name: 'tester', token: 'node-token' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'tester' }],
    currentContext: 'fake',
  });
  const core = kubeconfig.makeApiClient(k8s.CoreV1Api);
  const custom = kubeconfig.makeApiClient(k8s.CustomObjectsApi);

  await control('objects', { events: ['alpha', 'beta', 'gamma'].map(
    (name) => ({ type: 'ADDED', object: namespaceObject(name) })) });

  // Namespaces through the typed API.
  const seen = [];
  const informer = k8s.makeInformer(kubeconfig, '/api/v1/namespaces', () => core.listNamespace());
  for (const verb of ['add', 'update', 'delete']) {
    informer.on(verb, (obj) => seen.push(`${verb} ${obj.metadata.name} ${obj.metadata.labels?.v ?? ''}`.trim()));
  }
  const errors = [];
  informer.on('error', (err) => errors.push(err));
  await informer.start();
  await waitFor('the initial list', () => seen.length === 3);
  assert.deepEqual(seen.sort(), ['add alpha', 'add beta', 'add gamma']);

  seen.length = 0;
  await control('objects', { type: 'ADDED', object: namespaceObject('delta') });
  await control('objects', { type: 'MODIFIED', object: namespaceObject('delta', { v: '2' }) });
  await control('objects', { type: 'DELETED', object: namespaceObject('alpha') });
  await waitFor('three watch events', () => seen.length === 3);
  assert.deepEqual(seen, ['add delta', 'update delta 2', 'delete alpha']);
  assert.deepEqual(informer.list().map((o) => o.metadata.name).sort(), ['beta', 'delta', 'gamma']);

  // An in-stream ERROR 410 ends the watch and the informer relists.
  const listsBefore = await listsOf('/api/v1/namespaces');
  await control('expire-watches');
  const deadline = Date.now() + 10000;
  while ((await listsOf('/api/v1/namespaces')) === listsBefore) {
    assert.ok(Date.now() < deadline, 'no relist after the in-stream 410');
    await new Promise((r) => setTimeout(r, 50));
  }
  seen.length = 0;
  await control('objects', { type: 'ADDED', object: namespaceObject('epsilon') });
  await waitFor('an event after the relist', () => seen.includes('add epsilon'));

  // HTTP 410: the watch is closed cleanly, history compacted past the informer's version, and
  // the rewatch is answered 410; the informer relists and goes on.
  await control('config', { tooOldMode: 'http' });
  await control('objects', { type: 'ADDED',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bump', namespace: 'beta' } } });
  await control('compact');
  const listsBeforeHttp = await listsOf('/api/v1/namespaces');
  await control('close-watches');
  const httpDeadline = Date.now() + 10000;
  while ((await listsOf('/api/v1/namespaces')) === listsBeforeHttp) {
    assert.ok(Date.now() < httpDeadline, 'no relist after the HTTP 410');
    await new Promise((r) => setTimeout(r, 50));
  }
  const goneAnswers = (await control('requests')).filter(
    (r) => r.path === '/api/v1/namespaces' && r.query.watch && r.status === 410);
  assert.ok(goneAnswers.length >= 1, 'the rewatch was not answered 410');
  seen.length = 0;
  await control('objects', { type: 'MODIFIED', object: namespaceObject('epsilon', { v: '3' }) });
  await waitFor('an event after the HTTP 410 relist', () => seen.includes('update epsilon 3'));
  assert.deepEqual(errors, []);
  await informer.stop();

  // ResourceSlices (resource.k8s.io/v1) through the generic API.
  await control('objects', { events: [0, 1].map((i) => ({ type: 'ADDED', object: sliceObject(`slice-${i}`, `node-${i}`) })) });
  const slices = [];
  const sliceInformer = k8s.makeInformer(kubeconfig, '/apis/resource.k8s.io/v1/resourceslices',
    () => custom.listClusterCustomObject({ group: 'resource.k8s.io', version: 'v1', plural: 'resourceslices' }));
  for (const verb of ['add', 'update', 'delete']) {
    sliceInformer.on(verb, (obj) => slices.push(`${verb} ${obj.metadata.name}`));
  }
  await sliceInformer.start();
  await waitFor('the slice list', () => slices.length === 2);
  await control('objects', { type: 'ADDED', object: sliceObject('slice-2', 'node-2') });
  await control('objects', { type: 'DELETED', object: sliceObject('slice-0', 'node-0') });
  await waitFor('slice events', () => slices.length === 4);
  assert.deepEqual(slices.slice(2), ['add slice-2', 'delete slice-0']);
  await sliceInformer.stop();
  console.log(`ok: @kubernetes/client-node ${version} informers read the fake API server`);
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  fake.kill();
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
