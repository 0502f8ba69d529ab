import { chromium } from 'playwright-core'
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] })
const page = await browser.newPage()
await page.goto(process.argv[2])
await page.waitForTimeout(1500)
for (const click of process.argv.slice(3)) { await page.locator(click).first().click(); await page.waitForTimeout(500) }
console.log(await page.locator('body').ariaSnapshot())
await browser.close()
