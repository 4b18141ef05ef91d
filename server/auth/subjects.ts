/**
 * Which workspace a verified token acts for. A subject (`iss`, `sub`) linked by `member add` or
 * an earlier sign-up acts for its workspace; a removed one acts for none. An unknown subject,
 * with OAUTH_AUTO_SIGNUP, gets a new workspace on the trial plan, named from its `email` or
 * `name` claim.
 *
 * Sign-up claims the subject before creating anything: a member document with a workspace id
 * chosen up front and `ready: false`, then the workspace under that id, then `ready: true`. The
 * unique (iss, sub) index decides between first requests racing in several processes; the
 * losers follow the winner's document and, should its workspace not exist yet, create it under
 * the same id, which only one insert can do. So there is never a second workspace, and never one
 * with trial credits that no one can reach. A process that dies mid-way leaves a claim that the
 * subject's next request completes.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Credits } from '../credits/ledger.ts';
import { isDuplicateKeyError } from '../store/port.ts';
import type { Workspaces } from '../credits/workspaces.ts';
import type { VerifiedToken } from './access-tokens.ts';
import { subjectKey, type MemberDoc, type Members } from './members.ts';
import type { Refusal } from '../invocation/caller.ts';

const UNKNOWN: Refusal = {
  code: 'no_workspace',
  message: 'No workspace is linked to this account. Ask the operator to run "prospecta member add" for it.',
};
const REMOVED: Refusal = {
  code: 'no_workspace',
  message: 'This account’s membership of its workspace was removed.',
};

/** The workspace a subject acts for, and the member document that says so. */
export interface Membership {
  workspaceId: string;
  memberId: string;
}

export class Subjects {
  /** Sign-ups under way in this process, so one subject's concurrent first requests share one. */
  private readonly signups = new Map<string, Promise<Membership | Refusal>>();

  constructor(
    private readonly deps: { members: Members; workspaces: Workspaces; credits: Credits; log: Logger },
    private readonly autoSignup: boolean,
  ) {}

  /** The workspace id the token acts for, or why it acts for none. */
  async workspaceOf(token: VerifiedToken): Promise<string | Refusal> {
    const membership = await this.membershipOf(token);
    return 'code' in membership ? membership : membership.workspaceId;
  }

  /** The same, with the member document (a dashboard session ends with it). */
  async membershipOf(token: VerifiedToken): Promise<Membership | Refusal> {
    const member = await this.deps.members.find(token.issuer, token.subject);
    if (member) return this.follow(member, token);
    if (!this.autoSignup) return UNKNOWN;
    const key = subjectKey(token.issuer, token.subject);
    let signup = this.signups.get(key);
    if (!signup) {
      signup = this.signUp(token).finally(() => this.signups.delete(key));
      this.signups.set(key, signup);
    }
    return signup;
  }

  private async signUp(token: VerifiedToken): Promise<Membership | Refusal> {
    const { members } = this.deps;
    const member = (await members.claim(token.issuer, token.subject, randomUUID())) ?? (await members.fresh(token.issuer, token.subject));
    // Claims are never deleted, so a lost claim always has a winner to follow.
    if (!member) throw new Error('a sign-up lost its claim to a member document that is gone');
    return this.follow(member, token);
  }

  private async follow(member: MemberDoc, token: VerifiedToken): Promise<Membership | Refusal> {
    if (member.removedAt) return REMOVED;
    if (!member.ready) await this.complete(member, token);
    return { workspaceId: member.workspaceId, memberId: member._id };
  }

  /** Creates the claimed workspace unless someone already has, then marks the claim complete. */
  private async complete(member: MemberDoc, token: VerifiedToken): Promise<void> {
    const { workspaces, credits, members, log } = this.deps;
    try {
      const workspace = await workspaces.create(token.displayName ?? token.subject, 'trial', new Date(), member.workspaceId);
      await credits.flushPending(workspace);
      log.info({ workspaceId: workspace._id, memberId: member._id }, 'workspace created for a new oauth subject');
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    await members.markReady(member);
  }
}
