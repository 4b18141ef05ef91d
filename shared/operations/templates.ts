import { Deleted } from '../schemas/common.ts';
import {
  Template,
  TemplateCreateBody,
  TemplateList,
  TemplateParams,
  TemplateUpdateBody,
} from '../schemas/templates.ts';
import { defineOperations } from './types.ts';

export const templateOperations = defineOperations({
  listTemplates: {
    method: 'GET',
    path: '/api/prospecting/templates',
    summary: 'List templates',
    description: 'The templates of the workspace.',
    tag: 'Templates',
    scope: 'outreach:read',
    requiresPlan: true,
    credits: { rule: 'free' },
    request: {},
    responses: { 200: TemplateList },
    errors: [401],
  },
  createTemplate: {
    method: 'POST',
    path: '/api/prospecting/templates',
    summary: 'Save a template',
    description: 'Saves by name: a name that already exists updates that template instead of creating a duplicate.',
    tag: 'Templates',
    scope: 'outreach:write',
    requiresPlan: true,
    credits: { rule: 'free' },
    request: { body: TemplateCreateBody },
    responses: { 201: Template },
    errors: [400, 401, 429, 500],
  },
  updateTemplate: {
    method: 'PATCH',
    path: '/api/prospecting/templates/{templateId}',
    summary: 'Update a template',
    description:
      'The only way to rename a template. Omitted fields keep their value; 409 when the new name is used by ' +
      'another template.',
    tag: 'Templates',
    scope: 'outreach:write',
    requiresPlan: true,
    credits: { rule: 'free' },
    request: { params: TemplateParams, body: TemplateUpdateBody },
    responses: { 200: Template },
    errors: [400, 401, 404, 409, 429, 500],
  },
  deleteTemplate: {
    method: 'DELETE',
    path: '/api/prospecting/templates/{templateId}',
    summary: 'Delete a template',
    description: 'Campaigns already created from the template are left unchanged.',
    tag: 'Templates',
    scope: 'outreach:write',
    requiresPlan: true,
    credits: { rule: 'free' },
    request: { params: TemplateParams },
    responses: { 200: Deleted },
    errors: [401, 404],
  },
});
