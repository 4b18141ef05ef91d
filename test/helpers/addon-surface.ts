/**
 * What the add-on's tests reach of it: its entry points (Code.js's top-level functions) and the
 * feature modules the tests drive directly. test/helpers/addon-sandbox.ts bundles this file as
 * Apps Script would run it and evaluates it in a vm context holding only Apps Script's globals.
 */
export * from '../../addon/entry.ts';
export { ApiCallError, ProspectaClient } from '../../addon/api/client.ts';
export { activeJobs, cancelJob, loadJob, newJob, runJobs, STATUS_COLUMN, StopJob } from '../../addon/features/job.ts';
export { CAMPAIGN_KEY, CAMPAIGN_RUN_KEY, createCampaignFromRows, PROSPECTS_TAB, refreshProspects, ROW_ID_COLUMN, syncProspects } from '../../addon/features/campaigns.ts';
export { jobDeps, startRun } from '../../addon/features/runs.ts';
export { searchCompaniesIntoSheet, searchPeopleIntoSheet } from '../../addon/features/search.ts';
export { saveSettings } from '../../addon/features/settings.ts';
export { contextLimits, selectionContext } from '../../addon/features/agent.ts';
export { urlFetch } from '../../addon/gas/http.ts';
export { documentProperties, userProperties } from '../../addon/gas/properties.ts';
export { documentLock, gasClock, gasTriggers } from '../../addon/gas/runtime.ts';
export { sheetNamed, sheetOrNew } from '../../addon/gas/sheet.ts';
