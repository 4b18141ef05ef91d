import {
  AddProspectsBody,
  CadenceUpdateBody,
  CadenceUpdated,
  Campaign,
  CampaignCreateBody,
  CampaignCreated,
  CampaignDetail,
  CampaignList,
  CampaignParams,
  CampaignUpdateBody,
  ProspectsAdded,
} from '../schemas/campaigns.ts';
import { defineOperations } from './types.ts';

export const campaignOperations = defineOperations({
  listCampaigns: {
    method: 'GET',
    path: '/api/prospecting/campaigns',
    summary: 'List campaigns',
    description: 'The campaigns of the workspace, each with its number of prospects per status.',
    tag: 'Campaigns',
    scope: 'outreach:read',
    requiresPlan: true,
    credits: { rule: 'free' },
    request: {},
    responses: { 200: CampaignList },
    errors: [401],
  },
  createCampaign: {
    method: 'POST',
    path: '/api/prospecting/campaigns',
    summary: 'Create a campaign',
    description:
      'Creates a draft. With a sheet and rows, generates one personalized message (email and connection note) per ' +
      'row, using the column labels as context. Configuration comes from the template and/or the fields sent; the ' +
      'fields sent prevail. 404 when the sheet or the template is not found. Consumes no credits.',
    tag: 'Campaigns',
    scope: 'outreach:write',
    requiresPlan: true,
    credits: { rule: 'free' },
    request: { body: CampaignCreateBody },
    responses: { 201: CampaignCreated },
    errors: [400, 401, 402, 404, 429, 500],
  },
  getCampaign: {
    method: 'GET',
    path: '/api/prospecting/campaigns/{campaignId}',
    summary: 'Get a campaign',
    description: 'The configuration of a campaign and all its prospects.',
    tag: 'Campaigns',
    scope: 'outreach:read',
    requiresPlan: true,
    credits: { rule: 'free' },
    request: { params: CampaignParams },
    responses: { 200: CampaignDetail },
    errors: [401, 404],
  },
  updateCampaign: {
    method: 'PATCH',
    path: '/api/prospecting/campaigns/{campaignId}',
    summary: 'Update a campaign',
    description: 'Omitted fields keep their value. The language is set at creation only.',
    tag: 'Campaigns',
    scope: 'outreach:write',
    requiresPlan: true,
    credits: { rule: 'free' },
    request: { params: CampaignParams, body: CampaignUpdateBody },
    responses: { 200: Campaign },
    errors: [401, 404],
  },
  updateCadence: {
    method: 'PATCH',
    path: '/api/prospecting/campaigns/{campaignId}/cadence',
    summary: 'Edit a cadence',
    description:
      "Replaces the campaign's cadence, or one prospect's with `prospectId`. 409 while the cadence has not been " +
      'generated yet (it is generated when the campaign first receives prospects).',
    tag: 'Campaigns',
    scope: 'outreach:write',
    requiresPlan: true,
    credits: { rule: 'free' },
    request: { params: CampaignParams, body: CadenceUpdateBody },
    responses: { 200: CadenceUpdated },
    errors: [400, 401, 404, 409],
  },
  addProspects: {
    method: 'POST',
    path: '/api/prospecting/campaigns/{campaignId}/prospects',
    summary: 'Add prospects',
    description:
      'Generates messages for up to 25 rows of a sheet and links them to the campaign. Rows already in the ' +
      'campaign are skipped. 404 when the campaign or the sheet is not found; 409 when the campaign is full. ' +
      'Consumes no credits.',
    tag: 'Campaigns',
    scope: 'outreach:write',
    requiresPlan: true,
    credits: { rule: 'free' },
    request: { params: CampaignParams, body: AddProspectsBody },
    responses: { 201: ProspectsAdded },
    errors: [400, 401, 402, 404, 409, 429, 500],
  },
});
