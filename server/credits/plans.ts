/** Plans and their rules, from decisions.md: one home for "may this workspace use paid operations". */
import { PLANS } from '../../shared/schemas/credits.ts';

export const PLAN_NAMES = PLANS;
export type PlanName = (typeof PLANS)[number];

export const TRIAL_CREDITS = 500;
export const TRIAL_DAYS = 7;

export interface Plan {
  name: PlanName;
  /** When a trial ends; null for the other plans. */
  expiresAt: Date | null;
}

export function trialPlan(from: Date): Plan {
  return { name: 'trial', expiresAt: new Date(from.getTime() + TRIAL_DAYS * 86_400_000) };
}

export function planFor(name: PlanName, now: Date): Plan {
  return name === 'trial' ? trialPlan(now) : { name, expiresAt: null };
}

export function isTrialOver(plan: Plan, now: Date): boolean {
  return plan.name === 'trial' && plan.expiresAt !== null && plan.expiresAt.getTime() <= now.getTime();
}

/** Why a workspace may not use paid operations, or null when it may. */
export function planBlocker(plan: Plan, now: Date): string | null {
  if (plan.name === 'none') return 'This workspace has no active plan; choose a plan to use search, enrichment, AI and outreach.';
  if (isTrialOver(plan, now)) return `The free trial ended on ${plan.expiresAt!.toISOString()}; choose a plan to continue.`;
  return null;
}
