/**
 * What a handler may spend, as its context hands it (`ctx.budget`), and a cap shared by several
 * calls: part of the handler contract, so an area reads its budget without knowing the ledger.
 */
import { ServiceError } from '../lib/errors.ts';

/** "1 credit", "3 credits": how every 402 names an amount. */
export const credits = (n: number) => `${n} credit${n === 1 ? '' : 's'}`;

/** A stored cap shared by many calls (a job's `maxCredits`): an amount is taken from it before its debit. */
export interface Reservation {
  /** Whether `amount` fits; when it does, it is taken from the cap. */
  reserve(amount: number): Promise<boolean>;
  release(amount: number): Promise<void>;
}

/** What one request may spend: the balance, capped by the caller's `maxCredits`. */
export class Budget {
  constructor(
    readonly balance: number,
    /** The caller's own cap, when it sent one. */
    readonly cap?: number,
  ) {}

  get credits(): number {
    return Math.min(this.balance, this.cap ?? Infinity);
  }

  /**
   * 402 `insufficient_credits` when the balance cannot pay `price`. A caller whose own cap is
   * below the price asked for that, and gets an answer without the paid part instead.
   */
  requireBalanceFor(price: number, what: string): void {
    const cappedByCaller = this.cap !== undefined && this.cap < price;
    if (this.credits < price && !cappedByCaller) {
      throw new ServiceError('insufficient_credits', `The balance is ${credits(this.balance)}; ${what} costs ${credits(price)}.`);
    }
  }
}
