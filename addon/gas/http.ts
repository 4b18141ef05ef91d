/// <reference types="google-apps-script" />
import type { HttpPort, HttpRequest, HttpResponse } from '../api/http.ts';

function toParams(request: HttpRequest): GoogleAppsScript.URL_Fetch.URLFetchRequest {
  return {
    url: request.url,
    method: request.method,
    headers: request.headers,
    ...(request.payload !== undefined ? { payload: request.payload, contentType: 'application/json' } : {}),
    // Errors come back as responses so the add-on can read the server's {error, message}.
    muteHttpExceptions: true,
  };
}

function fromResponse(response: GoogleAppsScript.URL_Fetch.HTTPResponse): HttpResponse {
  return {
    status: response.getResponseCode(),
    headers: response.getAllHeaders() as Record<string, string>,
    body: response.getContentText(),
  };
}

export function urlFetch(): HttpPort {
  return {
    fetch: (request) => fromResponse(UrlFetchApp.fetch(request.url, toParams(request))),
    fetchAll: (requests) => UrlFetchApp.fetchAll(requests.map(toParams)).map(fromResponse),
  };
}
