import { connect } from 'node:net';

/** A request as bytes on the wire: nothing is normalised, validated or encoded on the way. */
export interface RawRequest {
  method: string;
  /** The request target exactly as sent (path and query, already percent-encoded or not). */
  target: string;
  /** In order; names and values are sent as latin1, so any byte 0x00–0xff can be tried. */
  headers: [string, string][];
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  text: string;
  /**
   * The connection ended before the whole body arrived. Node's server does that to a
   * `Connection: close` request whose large body the route never reads: it closes after about
   * 128 KB of a longer answer (with keep-alive the answer is whole), or the kernel resets the
   * connection over the unread bytes and drops what this side had not read yet. The status and
   * headers still count; the body cannot be judged.
   */
  truncated?: true;
}

export type RawOutcome = { response: RawResponse } | { error: string };

/**
 * Sends one request on a fresh connection (`Connection: close`) and reads the answer to the end.
 * Node's fetch and http client refuse or rewrite what a fuzzer wants to send (unescaped
 * characters in the target, control bytes in headers, arbitrary methods), so this writes the
 * bytes itself. An answer is a status line, headers and the body; anything else is an error.
 */
export function sendRaw(host: string, port: number, request: RawRequest, timeoutMs = 30_000): Promise<RawOutcome> {
  const head =
    `${request.method} ${request.target} HTTP/1.1\r\n` +
    request.headers.map(([name, value]) => `${name}: ${value}\r\n`).join('') +
    '\r\n';
  const bytes = request.body ? Buffer.concat([Buffer.from(head, 'latin1'), request.body]) : Buffer.from(head, 'latin1');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let socketError: string | undefined;
    let settled = false;
    const socket = connect({ host, port });
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const received = Buffer.concat(chunks);
      const response = parseResponse(received, request.method === 'HEAD');
      if (response) resolve({ response });
      else resolve({ error: socketError ?? (received.length === 0 ? 'connection closed without an answer' : `unparsable answer: ${received.subarray(0, 200).toString('latin1')}`) });
      socket.destroy();
    };
    const timer = setTimeout(() => {
      socketError = `no complete answer within ${timeoutMs} ms`;
      finish();
    }, timeoutMs);
    // Not end(): Node's server aborts a request whose client half-closes before the answer.
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may answer and close before it has read the whole request (413, 431): the
    // write then fails, but the answer already received is what counts.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      socketError ??= error.code ?? error.message;
    });
    socket.on('close', finish);
  });
}

function parseResponse(bytes: Buffer, head: boolean): RawResponse | undefined {
  // An interim answer (100 Continue to `Expect: 100-continue`) comes before the real one.
  while (/^HTTP\/1\.[01] 1\d\d /.test(bytes.subarray(0, 13).toString('latin1'))) {
    const interimEnd = bytes.indexOf('\r\n\r\n');
    if (interimEnd < 0) return undefined;
    bytes = bytes.subarray(interimEnd + 4);
  }
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
  if (!statusLine) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  let body = head ? Buffer.alloc(0) : bytes.subarray(end + 4);
  let truncated = false;
  if (!head && /chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const decoded = dechunk(body);
    if (decoded) body = decoded;
    else truncated = true;
  } else if (!head && headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (!Number.isInteger(length)) return undefined;
    if (body.length >= length) body = body.subarray(0, length);
    else truncated = true;
  }
  return { status: Number(statusLine[1]), headers, body, text: body.toString('utf8'), ...(truncated ? { truncated: true as const } : {}) };
}

function dechunk(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isInteger(size) || size < 0) return undefined;
    if (size === 0) return Buffer.concat(parts);
    const start = lineEnd + 2;
    if (bytes.length < start + size) return undefined;
    parts.push(bytes.subarray(start, start + size));
    at = start + size + 2;
  }
}
