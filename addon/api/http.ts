/** The add-on's view of HTTP: synchronous, like Apps Script's UrlFetchApp. */
export interface HttpRequest {
  url: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  headers: Record<string, string>;
  /** JSON text, when the operation has a body. */
  payload?: string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface HttpPort {
  fetch(request: HttpRequest): HttpResponse;
  /** Sends the requests in parallel, answers in the same order (UrlFetchApp.fetchAll). */
  fetchAll(requests: HttpRequest[]): HttpResponse[];
}

/** The request never got an answer: UrlFetchApp threw (DNS, refused, timed out, not allowed). */
export class NetworkError extends Error {}

/** Runs a fetch; whatever it throws is a network failure, since the server's answers come back as responses. */
export function sending<T>(fetch: () => T): T {
  try {
    return fetch();
  } catch (err) {
    throw new NetworkError(err instanceof Error ? err.message : String(err));
  }
}
