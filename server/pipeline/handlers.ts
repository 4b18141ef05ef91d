/**
 * Every operation id mapped to its handler. Each area keeps its handlers in its own `handlers.ts`,
 * which exports nothing else; the `Handlers` type makes the compiler reject a registry entry
 * without a handler.
 */
import * as agent from '../agent/handlers.ts';
import * as ai from '../ai/handlers.ts';
import * as keys from '../auth/handlers.ts';
import * as credits from '../credits/handlers.ts';
import * as enrich from '../enrich/handlers.ts';
import { getHealth } from '../health.ts';
import * as jobs from '../jobs/handlers.ts';
import * as outreach from '../outreach/handlers.ts';
import * as people from '../people/handlers.ts';
import * as providers from '../providers/handlers.ts';
import * as receita from '../receita/handlers.ts';
import type { Handlers } from './handler.ts';

export const handlers: Handlers = { getHealth, ...providers, ...credits, ...keys, ...receita, ...people, ...enrich, ...ai, ...outreach, ...agent, ...jobs };
