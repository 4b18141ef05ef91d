/**
 * What Node answers by itself, before a request reaches Koa (a header block over 16 KiB, a URL
 * too long, a malformed request line, a request that took too long to arrive), answered like
 * every other error: a JSON `{error, message}` with a request id and `Service-Version: 1`, rather
 * than Node's empty body. `server/start/main.ts` and the tests' app both listen through here.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ErrorCode } from '../lib/errors.ts';
import { STATUS_OF } from './error-status.ts';

type ParserError = Error & { code?: string };

function classify(err: ParserError): [ErrorCode, string] {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return ['headers_too_large', 'The request line and headers are larger than 16 KiB: send a shorter URL or fewer, smaller headers.'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return ['request_timeout', 'The request took too long to arrive.'];
    default:
      return ['invalid_request', `The request is not valid HTTP/1.1 (${err.code ?? 'parse error'}: ${err.message.slice(0, 120)}).`];
  }
}

/** Answers the server's `clientError`s as JSON. */
export function answerClientErrors(server: Server, log: Logger): void {
  server.on('clientError', (err: ParserError, socket: Duplex) => {
    // Nothing to answer on a connection the client already dropped, or after an answer began.
    const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    const [code, message] = classify(err);
    const status = STATUS_OF[code];
    const body = JSON.stringify({ error: code, message: `${message} (request ${requestId})` });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Service-Version: 1\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
    log.info({ requestId, status, reason: err.code }, 'request refused by the HTTP parser');
  });
}
