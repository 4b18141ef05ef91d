/// <reference types="google-apps-script" />
import type { CachePort, PropertiesPort } from '../features/ports.ts';

function wrap(props: GoogleAppsScript.Properties.Properties): PropertiesPort {
  return {
    get: (key) => props.getProperty(key),
    set: (key, value) => void props.setProperty(key, value),
    delete: (key) => void props.deleteProperty(key),
  };
}

/** The current user's properties: private to them, shared by no document. */
export function userProperties(): PropertiesPort {
  return wrap(PropertiesService.getUserProperties());
}

/** The document's properties: where a run over its rows keeps its place between executions. */
export function documentProperties(): PropertiesPort {
  return wrap(PropertiesService.getDocumentProperties());
}

/** The document's cache, shared by its users like the document's properties. */
export function documentCache(): CachePort {
  const cache = CacheService.getDocumentCache()!;
  return { get: (key) => cache.get(key), put: (key, value, seconds) => cache.put(key, value, seconds) };
}
