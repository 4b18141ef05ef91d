/// <reference types="google-apps-script" />
import type { PropertiesPort } from '../features/ports.ts';

/** The current user's properties: private to them, shared by no document. */
export function userProperties(): PropertiesPort {
  const props = PropertiesService.getUserProperties();
  return {
    get: (key) => props.getProperty(key),
    set: (key, value) => void props.setProperty(key, value),
  };
}
