// The example's @api scenario (features/orders_api.feature) as a plain Playwright script: the
// same requests and checks on playwright-core's APIRequestContext, for the API replay
// benchmark (benches/replay_api.rs). Usage: node replay-api-playwright.mjs BASE_URL
// (DEMO_PASSWORD in the environment). Prints one JSON line: {file, line, name, ms, ok}.
// It checks statuses and fields as the recording does; it validates no schema (the recording's
// two expectSchema checks have no counterpart here).
import { request } from 'playwright-core';

const url = process.argv[2];
const password = process.env.DEMO_PASSWORD;
const started = performance.now();
let ok = true;
const expect = (condition, what) => {
  if (!condition) {
    ok = false;
    console.error(`failed: ${what}`);
  }
};
const context = await request.newContext({ baseURL: url });
try {
  const session = await context.post('/api/session', { data: { email: 'demo@saffron.test', password } });
  expect(session.status() === 200, 'sign-in 200');
  const made = await context.post('/api/orders', { data: { customer: 'Lin', quantity: 2, product: 'Tea' } });
  expect(made.status() === 201, 'order 201');
  const order = await made.json();
  expect(order.total_cents === 900, 'total 900');
  const read = await context.get(`/api/orders/${order.id}`);
  expect(read.status() === 200, 'read back 200');
  const back = await read.json();
  expect(back.lines[0].quantity === 2 && back.lines[0].product === 'Tea', 'read back 2 Tea');
} finally {
  await context.dispose();
}
const ms = performance.now() - started;
console.log(JSON.stringify({ file: 'features/orders_api.feature', line: 5, name: 'An order made through the API reads back', ms, ok }));
