import { chromium } from 'playwright-core'
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] })
const page = await browser.newPage()
await page.goto('http://127.0.0.1:8773/')
await page.waitForTimeout(2000)
const client = await page.context().newCDPSession(page)
const { nodes } = await client.send('Accessibility.getFullAXTree')
for (const n of nodes) if (!n.ignored && n.role?.value !== 'StaticText' && n.role?.value !== 'InlineTextBox' && n.role?.value !== 'generic') console.log(n.role?.value, JSON.stringify(n.name?.value))
await browser.close()
