/// <reference types="google-apps-script" />
/**
 * The only names Apps Script sees: menu items, triggers and sidebar calls. addon/build.mjs
 * appends a top-level function for each export so Apps Script can find it.
 */
import { saveSettings, SettingsError, testConnection as runTestConnection } from './features/settings.ts';
import { urlFetch } from './gas/http.ts';
import { userProperties } from './gas/properties.ts';

export function onOpen(): void {
  SpreadsheetApp.getUi()
    .createAddonMenu()
    .addItem('Settings…', 'showSettings')
    .addItem('Test connection', 'testConnection')
    .addToUi();
}

export function onInstall(): void {
  onOpen();
}

export function showSettings(): void {
  const ui = SpreadsheetApp.getUi();
  const key = ui.prompt('prospecta: API key', 'Paste your workspace API key (service_live_…).', ui.ButtonSet.OK_CANCEL);
  if (key.getSelectedButton() !== ui.Button.OK) return;
  const url = ui.prompt('prospecta: server URL', 'The address of your prospecta server (https://…).', ui.ButtonSet.OK_CANCEL);
  if (url.getSelectedButton() !== ui.Button.OK) return;
  try {
    saveSettings(userProperties(), { apiKey: key.getResponseText(), serverUrl: url.getResponseText() });
    ui.alert('prospecta', runTestConnection(userProperties(), urlFetch()).message, ui.ButtonSet.OK);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    ui.alert('prospecta', err.message, ui.ButtonSet.OK);
  }
}

export function testConnection(): void {
  const ui = SpreadsheetApp.getUi();
  ui.alert('prospecta', runTestConnection(userProperties(), urlFetch()).message, ui.ButtonSet.OK);
}
