/** Templates: list, save by name, PATCH (the only rename), delete. Free; plan required. */
import { notFound } from '../http/errors.ts';
import { templateView } from '../outreach/templates.ts';
import type { Handler } from './types.ts';

export const listTemplates: Handler<'listTemplates'> = async (_input, ctx) => ({
  templates: (await ctx.services.templates.list(ctx.workspaceId)).map(templateView),
});

export const createTemplate: Handler<'createTemplate'> = async (input, ctx) =>
  templateView((await ctx.services.templates.save(ctx.workspaceId, input)).template);

export const updateTemplate: Handler<'updateTemplate'> = async ({ templateId, ...fields }, ctx) =>
  templateView(await ctx.services.templates.update(ctx.workspaceId, templateId, fields));

export const deleteTemplate: Handler<'deleteTemplate'> = async ({ templateId }, ctx) => {
  if (!(await ctx.services.templates.remove(ctx.workspaceId, templateId))) throw notFound('template');
  return { deleted: true };
};
