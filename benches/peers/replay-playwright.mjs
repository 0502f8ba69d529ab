// The benchmark peer of `saffron run`: the same scenarios, written by hand as a plain Playwright
// script, replayed against the demo app. Each scenario function performs the actions of its
// recording (.saffron/cache/**.json), in the same order, with the locator of the tier
// the recording was made at, so the two tools do the same work and only the engine differs.
//
// Usage: node benches/peers/replay-playwright.mjs BASE_URL [--storage-state]
//   (password from $DEMO_PASSWORD)
// Prints one JSON line per scenario, then {"total_ms", "launch_ms"}; exits 1 if any failed.
// With --storage-state, the sign-in is performed once, the way Playwright users do it: the
// first scenario that signs in saves `context.storageState()`, and each later one starts in a
// context made with that state, on the page the sign-in ended on (the peer of a StepSet tagged
// @session).
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

const DEMO_EMAIL = 'demo@saffron.test'
const DEMO_PASSWORD = process.env.DEMO_PASSWORD || 'saffron-demo'

// Saffron's default timeouts by action kind, so a slow step fails here when it fails there.
const ACTION_TIMEOUT = 10_000
const ASSERTION_TIMEOUT = 5_000
const NAVIGATION_TIMEOUT = 30_000

// Pauses between assertion attempts, the same ladder as Playwright's own `expect` polling.
const POLL_PAUSES_MS = [0, 20, 50, 100, 100, 200]

// ---------------------------------------------------------------------------------------------
// Assertions. playwright-core ships no `expect`, so these are built on its auto-waiting calls.

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// Saffron compares text after collapsing whitespace, as a reader sees it.
const normalize = (text) => text.replace(/\s+/g, ' ').trim()

// Playwright errors carry a multi-line, colored call log; the JSON report wants one plain line
// that still says which element was awaited, and that is the first line of the log.
function oneLine(error) {
  const plain = String(error?.message ?? error).replace(/\u001b\[[0-9;]*m/g, '')
  const lines = plain.split('\n').map((line) => line.trim()).filter(Boolean)
  const log = lines.indexOf('Call log:')
  const detail = log >= 0 && lines[log + 1] ? ` (${lines[log + 1].replace(/^-\s*/, '')})` : ''
  return lines[0] + detail
}

// Retries `attempt` until it passes or the assertion timeout runs out. An attempt that throws
// (element not there yet, page navigating) counts as not passing yet, as in Playwright's expect.
async function retry(what, attempt) {
  const deadline = performance.now() + ASSERTION_TIMEOUT
  let found = 'nothing'
  for (let round = 0; ; round++) {
    const remaining = Math.max(1, deadline - performance.now())
    try {
      const outcome = await attempt(remaining)
      if (outcome.pass) return
      found = outcome.found
    } catch (error) {
      found = oneLine(error)
    }
    const left = deadline - performance.now()
    if (left <= 0) break
    await sleep(Math.min(POLL_PAUSES_MS[Math.min(round, POLL_PAUSES_MS.length - 1)], left))
  }
  throw new Error(`expected ${what}, found ${found} (after ${ASSERTION_TIMEOUT / 1000} s)`)
}

async function expectVisible(locator) {
  try {
    await locator.waitFor({ state: 'visible', timeout: ASSERTION_TIMEOUT })
  } catch (error) {
    throw new Error(`expected ${locator} to be visible: ${oneLine(error)}`)
  }
}

// An absent element counts as hidden, as in saffron and Playwright.
async function expectHidden(locator) {
  try {
    await locator.waitFor({ state: 'hidden', timeout: ASSERTION_TIMEOUT })
  } catch (error) {
    throw new Error(`expected ${locator} to be hidden: ${oneLine(error)}`)
  }
}

// `expected` is the exact text (whitespace-normalized) or a RegExp, like the recording's
// `text` / `textRegex`. innerText, because saffron reads the text a user sees.
function expectText(locator, expected) {
  return retry(`${locator} to have text ${expected instanceof RegExp ? expected : JSON.stringify(expected)}`, async (timeout) => {
    const text = normalize(await locator.innerText({ timeout }))
    const pass = expected instanceof RegExp ? expected.test(text) : text === normalize(expected)
    return { pass, found: JSON.stringify(text) }
  })
}

function expectValue(locator, expected) {
  return retry(`${locator} to have value ${JSON.stringify(expected)}`, async (timeout) => {
    const value = await locator.inputValue({ timeout })
    return { pass: value === expected, found: JSON.stringify(value) }
  })
}

function expectChecked(locator, checked) {
  return retry(`${locator} to be ${checked ? 'checked' : 'unchecked'}`, async (timeout) => {
    const actual = await locator.isChecked({ timeout })
    return { pass: actual === checked, found: actual ? 'checked' : 'unchecked' }
  })
}

function expectCount(locator, count) {
  return retry(`${locator} to match ${count} elements`, async () => {
    const actual = await locator.count()
    return { pass: actual === count, found: `${actual}` }
  })
}

// The recording's URLs are relative to the base URL and its patterns see only path and query
// (the host differs between environments), so both checks compare those.
const pathAndQuery = (url) => url.pathname + url.search

async function expectUrl(page, expected) {
  const matches = expected instanceof RegExp
    ? (url) => expected.test(pathAndQuery(url))
    : (url) => pathAndQuery(url) + url.hash === expected
  try {
    // 'commit': an assertion on the address bar, not a wait for the page to load.
    await page.waitForURL(matches, { waitUntil: 'commit', timeout: ASSERTION_TIMEOUT })
  } catch (error) {
    throw new Error(`expected URL ${expected}, found ${page.url()}: ${oneLine(error)}`)
  }
}

// Errors never go away, so there is nothing to wait for: check what was logged so far.
function expectNoConsoleErrors(consoleErrors) {
  if (consoleErrors.length > 0) {
    throw new Error(`expected no console errors, found ${consoleErrors.length}: ${consoleErrors.join('; ')}`)
  }
}

// ---------------------------------------------------------------------------------------------
// Network: the recording's `response` matchers, as predicates for page.waitForResponse.

function statusMatches(actual, wanted) {
  return /^\dxx$/.test(wanted) ? Math.floor(actual / 100) === Number(wanted[0]) : actual === Number(wanted)
}

function responseMatching({ method, path, status, body }) {
  return async (response) => {
    if (!path.test(pathAndQuery(new URL(response.url())))) return false
    if (method && response.request().method() !== method) return false
    if (status && !statusMatches(response.status(), status)) return false
    if (body) {
      // A body that cannot be read (a redirect, a closed page) is simply not the one wanted.
      try {
        return body.test(await response.text())
      } catch {
        return false
      }
    }
    return true
  }
}

// Registered before the action that triggers the request, so a fast answer is not missed. The
// promise is marked handled at once: if the triggering action fails first, its rejection must
// not crash the process, and the scenario already reports the first failure.
function waitForResponse(page, matcher) {
  const response = page.waitForResponse(responseMatching(matcher), { timeout: ACTION_TIMEOUT })
  response.catch(() => {})
  return response
}

// `expectResponse` audits the whole scenario, so it searches every response seen so far (and
// keeps looking until the timeout, for one still in flight).
function expectResponse(responses, matcher) {
  const matches = responseMatching(matcher)
  return retry(`a response ${matcher.method} ${matcher.path} ${matcher.status}`, async () => {
    for (const response of [...responses]) {
      if (await matches(response)) return { pass: true }
    }
    return { pass: false, found: `${responses.length} other responses` }
  })
}

// The recording's `switchTab` with a urlPattern: take the tab the click opened, wait until it
// shows the wanted address, and bring it to the front as a user would see it.
async function switchTab(opened, pattern) {
  const tab = await opened
  await tab.waitForURL((url) => pattern.test(pathAndQuery(url)), { waitUntil: 'commit', timeout: ACTION_TIMEOUT })
  await tab.bringToFront()
  return tab
}

// ---------------------------------------------------------------------------------------------
// Shared steps: the StepSets of features/shared.steps.saffron and the sign-in steps, each one
// the actions its recordings hold for it.

// Given I am on the sign-in page (2 actions)
async function openSignInPage({ page, act }) {
  await act(page.goto('/login'))
  await act(expectVisible(page.getByRole('heading', { name: 'Sign in', exact: true })))
}

// When I sign in with ... (4 actions)
async function signIn({ page, act }, password, status) {
  const session = waitForResponse(page, { method: 'POST', path: /^\/api\/session$/, status })
  await act(page.getByRole('textbox', { name: 'Email', exact: true }).fill(DEMO_EMAIL))
  await act(page.getByLabel('Password', { exact: true }).fill(password))
  await act(page.getByRole('button', { name: 'Sign in', exact: true }).click())
  await act(session)
}

// Then I see the orders page (2 actions)
async function seeOrdersPage({ page, act }) {
  await act(expectUrl(page, '/orders'))
  await act(expectVisible(page.getByRole('heading', { name: 'Orders', exact: true })))
}

const SIGN_IN_ONCE = process.argv.includes('--storage-state')
// With --storage-state: the state the first sign-in left, and the address it ended on.
let kept = null

// StepSet signed in as the demo user (8 actions; restored: a page load)
async function signedInAsDemoUser(s) {
  if (s.restored) {
    await s.act(s.page.goto(s.restored.url))
    return
  }
  await openSignInPage(s)
  await signIn(s, DEMO_PASSWORD, '2xx')
  await seeOrdersPage(s)
  if (SIGN_IN_ONCE && !kept) kept = { state: await s.context.storageState(), url: s.page.url() }
}

// StepSet a new order form (3 actions)
async function newOrderForm({ page, act }) {
  await act(expectUrl(page, '/orders'))
  await act(page.getByRole('link', { name: 'New order', exact: true }).click())
  await act(expectVisible(page.getByRole('heading', { name: 'New order', exact: true })))
}

// The search box is found by role in both search scenarios.
const searchBox = (page) => page.getByRole('searchbox', { name: 'Search orders', exact: true })

// ---------------------------------------------------------------------------------------------
// features/sign_in.feature

async function signInWithTheDemoAccount(s) {
  await openSignInPage(s)
  await signIn(s, DEMO_PASSWORD, '2xx')
  await seeOrdersPage(s)
  await s.act(expectNoConsoleErrors(s.consoleErrors))
}

async function aWrongPasswordIsRefused(s) {
  const { page, act } = s
  await openSignInPage(s)
  await signIn(s, 'not-the-password', '401')
  await act(expectText(page.getByRole('alert'), 'Email or password is wrong'))
}

// ---------------------------------------------------------------------------------------------
// features/new_order.saffron

// The Outline's Examples rows.
const ORDER_ROWS = [
  { customer: 'Margaret Hamilton', quantity: '3', product: 'Tea', total: '€13.50' },
  { customer: 'Katherine Johnson', quantity: '1', product: 'Saffron', total: '€12.00' },
]

async function createAnOrderFor(s, row) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  await newOrderForm(s)
  await act(page.getByRole('textbox', { name: 'Customer', exact: true }).fill(row.customer))
  await act(page.getByRole('spinbutton', { name: 'Quantity', exact: true }).fill(row.quantity))
  await act(page.getByRole('combobox', { name: 'Product', exact: true }).selectOption(row.product))
  const saved = waitForResponse(page, { method: 'POST', path: /^\/api\/orders$/, status: '201' })
  await act(page.getByRole('button', { name: 'Save order', exact: true }).click())
  await act(saved)
  await act(expectText(page.getByTestId('confirmation'), 'Order saved'))
  await act(expectText(page.getByTestId('saved-total'), `Total: ${row.total}`))
  await act(expectResponse(s.responses, { method: 'POST', path: /^\/api\/orders$/, status: '201' }))
  await act(page.goto('/orders'))
  await act(expectVisible(page.getByRole('cell', { name: row.customer, exact: true })))
}

async function anOrderNeedsACustomer(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  await newOrderForm(s)
  await act(page.getByRole('button', { name: 'Save order', exact: true }).click())
  await act(expectText(page.getByRole('alert'), 'Customer is required'))
}

async function theTotalFollowsTheQuantityAndTheProduct(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  await newOrderForm(s)
  const quantity = page.getByRole('spinbutton', { name: 'Quantity', exact: true })
  await act(quantity.fill('2'))
  await act(page.getByRole('combobox', { name: 'Product', exact: true }).selectOption('Mugs'))
  await act(expectValue(quantity, '2'))
  await act(expectText(page.getByTestId('order-total'), 'Total: €14.00'))
}

async function giftWrapCanBeChosenAndRemoved(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  await newOrderForm(s)
  const giftWrap = page.getByRole('checkbox', { name: 'Gift wrap', exact: true })
  await act(giftWrap.check())
  await act(expectChecked(giftWrap, true))
  await act(giftWrap.uncheck())
  await act(expectChecked(giftWrap, false))
}

// ---------------------------------------------------------------------------------------------
// features/orders.saffron

async function searchOrdersByCustomer(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  const searched = waitForResponse(page, { method: 'GET', path: /^\/api\/orders\?q=/, status: '200' })
  await act(searchBox(page).fill('Ada Lovelace'))
  await act(page.getByRole('button', { name: 'Search', exact: true }).click())
  await act(searched)
  await act(expectText(page.getByTestId('result-count'), '2 orders'))
  await act(expectCount(page.getByRole('cell', { name: 'Ada Lovelace', exact: true }), 2))
}

async function searchByPressingEnter(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  const searched = waitForResponse(page, { method: 'GET', path: /^\/api\/orders\?q=/, status: '200' })
  // The recording's `typeText`: a key press per character.
  await act(searchBox(page).pressSequentially('Grace Hopper'))
  await act(searchBox(page).press('Enter'))
  await act(searched)
  await act(expectText(page.getByTestId('result-count'), '1 order'))
}

async function addANoteToAnOrder(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  await act(page.getByRole('link', { name: '#1001', exact: true }).click())
  await act(expectVisible(page.getByRole('heading', { name: 'Order #1001', exact: true })))
  const noted = waitForResponse(page, { method: 'POST', path: /^\/api\/orders\/1001\/notes$/, status: '2xx' })
  await act(page.getByRole('textbox', { name: 'Note', exact: true }).fill('Deliver before noon, please.'))
  await act(page.getByRole('button', { name: 'Add note', exact: true }).click())
  await act(noted)
  await act(expectVisible(page.getByText('Deliver before noon, please.', { exact: true })))
}

async function deleteAnOrderAfterConfirming(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  const deleted = waitForResponse(page, { method: 'DELETE', path: /^\/api\/orders\/1004$/, status: '2xx' })
  // The recording's `dialog` action: armed before the click that opens the confirm().
  await act(page.once('dialog', (dialog) => dialog.accept()))
  await act(page.getByRole('button', { name: 'Delete order #1004', exact: true }).click())
  await act(deleted)
  await act(expectText(page.getByTestId('flash'), 'Order #1004 deleted'))
  await act(expectHidden(page.getByRole('link', { name: '#1004', exact: true })))
}

async function exportTheOrders(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  // The page polls the export job; only the answer that says READY ends the wait.
  const ready = waitForResponse(page, { method: 'GET', path: /^\/api\/exports\/\d+$/, status: '200', body: /"READY"/ })
  // The file the page hands out once the export is ready, listened for before the click.
  const downloaded = page.waitForEvent('download', { timeout: ACTION_TIMEOUT })
  downloaded.catch(() => {})
  await act(page.getByRole('button', { name: 'Export orders', exact: true }).click())
  await act(ready)
  await act(expectText(page.getByTestId('export-status'), /^Export ready: \d+ orders?$/))
  // The recording's `expectDownload`: its name, and a row it holds once complete.
  await act(downloaded.then(async (download) => {
    if (download.suggestedFilename() !== 'orders.csv') throw new Error(`downloaded ${download.suggestedFilename()}`)
    const text = await readFile(await download.path(), 'utf8')
    if (!text.includes('#1003,Grace Hopper')) throw new Error(`orders.csv holds ${JSON.stringify(text.slice(0, 80))}`)
  }))
}

async function openAnInvoiceInANewTab(s) {
  const { page, context, act } = s
  await signedInAsDemoUser(s)
  const opened = context.waitForEvent('page', { timeout: ACTION_TIMEOUT })
  opened.catch(() => {})
  await act(page.getByRole('link', { name: 'Open invoice of #1001', exact: true }).click())
  const invoice = await act(switchTab(opened, /\/invoices\/1001$/))
  await act(expectUrl(invoice, /\/invoices\/1001$/))
  await act(expectVisible(invoice.getByRole('heading', { name: 'Invoice #1001', exact: true })))
}

async function hoveringTheHelpButtonExplainsTheSearch(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  await act(page.getByRole('button', { name: 'Help', exact: true }).hover())
  await act(expectUrl(page, '/orders'))
  await act(expectVisible(page.getByRole('heading', { name: 'Orders', exact: true })))
  await act(expectVisible(page.getByRole('tooltip', { name: 'Search by customer name', exact: true })))
}

async function openAnOrderByDoubleClickingItsRow(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  await act(page.getByRole('cell', { name: 'Grace Hopper', exact: true }).dblclick())
  await act(expectUrl(page, '/orders/1003'))
  await act(expectVisible(page.getByRole('heading', { name: 'Order #1003', exact: true })))
}

// The recording's `upload` on a button: clicked, and the file chooser it opens answered.
const RECEIPT = fileURLToPath(new URL('../../features/fixtures/receipt.txt', import.meta.url))

async function attachAReceiptToAnOrder(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  await act(page.getByRole('link', { name: '#1002', exact: true }).click())
  await act(expectVisible(page.getByRole('heading', { name: 'Order #1002', exact: true })))
  const attached = waitForResponse(page, { method: 'POST', path: /^\/api\/orders\/1002\/attachments\?/, status: '2xx' })
  const chooser = page.waitForEvent('filechooser')
  await act(page.getByRole('button', { name: 'Attach a file', exact: true }).click())
  await act(chooser.then((opened) => opened.setFiles(RECEIPT)))
  await act(attached)
  await act(expectVisible(page.getByText('receipt.txt (39 bytes)', { exact: true })))
}

async function pinAnOrderByDraggingIt(s) {
  const { page, act } = s
  await signedInAsDemoUser(s)
  const pinned = page.getByRole('region', { name: 'Pinned orders', exact: true })
  await act(page.getByRole('cell', { name: 'Grace Hopper', exact: true }).dragTo(pinned))
  await act(expectText(pinned.getByRole('listitem'), '#1003 Grace Hopper'))
}

// ---------------------------------------------------------------------------------------------
// The run: the order, files, lines and names `saffron run --format json` reports.

const SCENARIOS = [
  { file: 'features/new_order.saffron', line: 22, name: `Create an order for ${ORDER_ROWS[0].customer}`, run: (s) => createAnOrderFor(s, ORDER_ROWS[0]) },
  { file: 'features/new_order.saffron', line: 23, name: `Create an order for ${ORDER_ROWS[1].customer}`, run: (s) => createAnOrderFor(s, ORDER_ROWS[1]) },
  { file: 'features/new_order.saffron', line: 25, name: 'An order needs a customer', run: anOrderNeedsACustomer },
  { file: 'features/new_order.saffron', line: 30, name: 'The total follows the quantity and the product', run: theTotalFollowsTheQuantityAndTheProduct },
  { file: 'features/new_order.saffron', line: 36, name: 'Gift wrap can be chosen and removed', run: giftWrapCanBeChosenAndRemoved },
  { file: 'features/orders.saffron', line: 8, name: 'Search orders by customer', run: searchOrdersByCustomer },
  { file: 'features/orders.saffron', line: 13, name: 'Search by pressing Enter', run: searchByPressingEnter },
  { file: 'features/orders.saffron', line: 17, name: 'Add a note to an order', run: addANoteToAnOrder },
  { file: 'features/orders.saffron', line: 25, name: 'Delete an order after confirming', run: deleteAnOrderAfterConfirming },
  { file: 'features/orders.saffron', line: 30, name: 'Export the orders', run: exportTheOrders },
  { file: 'features/orders.saffron', line: 34, name: 'Open an invoice in a new tab', run: openAnInvoiceInANewTab },
  { file: 'features/orders.saffron', line: 38, name: 'Hovering the help button explains the search', run: hoveringTheHelpButtonExplainsTheSearch },
  { file: 'features/orders.saffron', line: 49, name: 'Open an order by double-clicking its row', run: openAnOrderByDoubleClickingItsRow },
  { file: 'features/orders.saffron', line: 53, name: 'Attach a receipt to an order', run: attachAReceiptToAnOrder },
  { file: 'features/orders.saffron', line: 58, name: 'Pin an order by dragging it', run: pinAnOrderByDraggingIt },
  { file: 'features/sign_in.feature', line: 5, name: 'Sign in with the demo account', run: signInWithTheDemoAccount },
  { file: 'features/sign_in.feature', line: 11, name: 'A wrong password is refused', run: aWrongPasswordIsRefused },
]

const round = (ms) => Math.round(ms * 10) / 10

// One scenario in its own context and page, timed from context creation to context close.
async function runScenario(browser, baseURL, scenario) {
  const started = performance.now()
  const restored = scenario.file !== 'features/sign_in.feature' ? kept : null
  const context = await browser.newContext(restored ? { baseURL, storageState: restored.state } : { baseURL })
  context.setDefaultTimeout(ACTION_TIMEOUT)
  context.setDefaultNavigationTimeout(NAVIGATION_TIMEOUT)
  // Listened to on the context, before the first page exists, so every tab's output counts.
  const consoleErrors = []
  const responses = []
  context.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`console.error: ${message.text()}`)
  })
  context.on('weberror', (error) => consoleErrors.push(`uncaught: ${oneLine(error.error())}`))
  context.on('response', (response) => responses.push(response))

  // Counts each recorded action once it is done, so a failure says which one broke.
  let actions = 0
  const act = async (pending) => {
    const value = await pending
    actions += 1
    return value
  }

  let error = null
  try {
    const page = await context.newPage()
    await scenario.run({ page, context, act, consoleErrors, responses, restored })
  } catch (failure) {
    error = `action ${actions + 1}: ${oneLine(failure)}`
  }
  await context.close()
  const ms = performance.now() - started
  return { file: scenario.file, line: scenario.line, name: scenario.name, ms: round(ms), actions, ok: error === null, error }
}

async function main() {
  const baseURL = process.argv[2]
  if (!baseURL || baseURL.startsWith('--')) {
    console.error('usage: node benches/peers/replay-playwright.mjs BASE_URL [--storage-state]')
    process.exit(2)
  }

  const launchStarted = performance.now()
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
  const launchMs = performance.now() - launchStarted

  let allOk = true
  try {
    // One at a time: the scenarios share the demo app's data (one deletes an order, others
    // create some), and the benchmark compares with saffron on one worker.
    for (const scenario of SCENARIOS) {
      const result = await runScenario(browser, baseURL, scenario)
      allOk &&= result.ok
      process.stdout.write(JSON.stringify(result) + '\n')
    }
  } finally {
    await browser.close()
  }

  // performance.now() counts from process start, module loading included.
  process.stdout.write(JSON.stringify({ total_ms: round(performance.now()), launch_ms: round(launchMs) }) + '\n')
  process.exitCode = allOk ? 0 : 1
}

await main()
