// An HTTP reverse proxy in front of `dlcache driver` (JSON lines on stdin/stdout), so a test suite that
// tests HTTP caches as proxies (http-tests/cache-tests, see README.md here) can test DownloadCache.
// Each incoming request becomes one driver line {id, method, url, headers, body}; the driver's
// answer becomes the HTTP response (hop-by-hop fields dropped; a driver error line becomes a 502 with
// X-Adapter-Error). Listens on 127.0.0.1 only. Env:
//   ADAPTER_PORT  port to listen on (127.0.0.1)          ORIGIN   suite server base, e.g. http://127.0.0.1:8000
//   DRIVER        path to the dlcache binary              DRIVER_ARGS  extra args (space separated)
//   ADAPTER_LOG   JSON-lines log of every request/answer  DRIVER_STDERR file for the driver's stderr
import http from 'node:http'
import fs from 'node:fs'
import { spawn } from 'node:child_process'
import readline from 'node:readline'

const port = parseInt(process.env.ADAPTER_PORT || '8082')
const origin = (process.env.ORIGIN || 'http://127.0.0.1:8000').replace(/\/$/, '')
const driverPath = process.env.DRIVER || '.build/debug/dlcache'
const driverArgs = ['driver'].concat((process.env.DRIVER_ARGS || '').split(' ').filter(Boolean))
const logFile = process.env.ADAPTER_LOG
const log = (obj) => { if (logFile) fs.appendFileSync(logFile, JSON.stringify(Object.assign({ t: Date.now() }, obj)) + '\n') }

const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authenticate', 'proxy-authorization'])

function connectionListed (pairs) {
  const listed = new Set()
  for (const [k, v] of pairs) {
    if (k.toLowerCase() === 'connection') v.split(',').map(s => s.trim().toLowerCase()).filter(Boolean).forEach(n => listed.add(n))
  }
  return listed
}

const driver = spawn(driverPath, driverArgs, { stdio: ['pipe', 'pipe', 'pipe'] })
if (process.env.DRIVER_STDERR) driver.stderr.pipe(fs.createWriteStream(process.env.DRIVER_STDERR, { flags: 'a' }))
else driver.stderr.pipe(process.stderr)
driver.on('exit', (code, sig) => { console.error(`driver exited code=${code} signal=${sig}`); log({ event: 'driver-exit', code, sig }) })

const pending = new Map()
let nextId = 1
readline.createInterface({ input: driver.stdout }).on('line', line => {
  if (!line.trim()) return
  let answer
  try { answer = JSON.parse(line) } catch (e) { console.error(`unparseable driver line: ${line}`); return }
  const p = pending.get(answer.id)
  if (!p) { console.error(`answer for unknown id: ${line.slice(0, 200)}`); log({ event: 'orphan-answer', answer }); return }
  pending.delete(answer.id)
  p(answer)
})

function askDriver (reqLine) {
  return new Promise(resolve => {
    pending.set(reqLine.id, resolve)
    driver.stdin.write(JSON.stringify(reqLine) + '\n')
  })
}

const server = http.createServer((req, res) => {
  const chunks = []
  req.on('data', c => chunks.push(c))
  req.on('end', async () => {
    const id = nextId++
    const raw = req.rawHeaders
    let pairs = []
    for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i], raw[i + 1]])
    const listed = connectionListed(pairs)
    pairs = pairs.filter(([k]) => {
      const n = k.toLowerCase()
      return !HOP.has(n) && !listed.has(n) && n !== 'host' && n !== 'content-length'
    })
    const body = chunks.length ? Buffer.concat(chunks).toString('utf8') : null
    const reqLine = { id, method: req.method, url: origin + req.url, headers: pairs, body }
    log({ dir: 'request', id, method: req.method, url: reqLine.url, headers: pairs, bodyLength: body ? body.length : 0 })
    const answer = await askDriver(reqLine)
    if (answer.error !== undefined) {
      log({ dir: 'answer', id, error: answer.error })
      res.writeHead(502, 'Driver Error', { 'Content-Type': 'text/plain', 'X-Adapter-Error': String(answer.error).replace(/[^\x20-\x7e]/g, '?').slice(0, 500) })
      res.end(`driver error: ${answer.error}\n`)
      return
    }
    let bodyBuf
    if (answer.bodyBase64 !== undefined) bodyBuf = Buffer.from(answer.bodyBase64, 'base64')
    else if (typeof answer.bodyFile === 'string') bodyBuf = fs.readFileSync(answer.bodyFile)
    else if (typeof answer.body === 'string') bodyBuf = Buffer.from(answer.body, 'utf8')
    else bodyBuf = Buffer.alloc(0)
    const respPairs = answer.headers || []
    const respListed = connectionListed(respPairs)
    const flat = []
    let contentLength
    for (const [k, v] of respPairs) {
      const n = k.toLowerCase()
      if (HOP.has(n) || respListed.has(n)) continue
      if (n === 'content-length') { contentLength = v; continue }
      flat.push(k, v)
    }
    const noBody = req.method === 'HEAD' || answer.status === 204 || answer.status === 304 || (answer.status >= 100 && answer.status < 200)
    if (contentLength !== undefined) {
      if (!noBody && parseInt(contentLength) !== bodyBuf.length) {
        log({ event: 'content-length-mismatch', id, contentLength, bodyLength: bodyBuf.length })
        bodyBuf = bodyBuf.subarray(0, Math.min(bodyBuf.length, parseInt(contentLength) || 0))
      }
      flat.push('Content-Length', contentLength)
    }
    log({ dir: 'answer', id, status: answer.status, statusText: answer.statusText, headers: respPairs, interim: answer.interim, bodyLength: bodyBuf.length })
    try {
      for (const im of (answer.interim || [])) {
        if (im.status === 102) res.writeProcessing()
        else if (im.status === 103) {
          const hints = {}
          for (const [k, v] of (im.headers || [])) hints[k.toLowerCase()] = v
          if (hints.link) res.writeEarlyHints(hints)
        }
      }
      res.writeHead(answer.status, answer.statusText || undefined, flat)
      if (noBody) res.end()
      else res.end(bodyBuf)
    } catch (e) {
      console.error(`write failed for ${id}: ${e.message}`)
      log({ event: 'write-failed', id, message: e.message })
      try { res.destroy() } catch (_) {}
    }
  })
})

server.keepAliveTimeout = 65000
server.listen(port, '127.0.0.1', () => console.log(`adapter listening on http://127.0.0.1:${port}/ -> ${origin} via ${driverPath} ${driverArgs.join(' ')}`))

function shutdown () {
  server.close()
  driver.stdin.end()
  setTimeout(() => process.exit(0), 5000).unref()
  driver.on('exit', () => process.exit(0))
}
process.on('SIGTERM', shutdown)
process.on('SIGINT', shutdown)
