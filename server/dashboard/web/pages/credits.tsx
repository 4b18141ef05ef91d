/**
 * Credits: the ledger newest first, a page at a time ("Older" / "Newer"), filtered by operation (a list of names),
 * exported as CSV (every page of the current filter, built in the browser), and the consumption
 * per day. Its parts are in credits/.
 */
import { call } from '../api.ts';
import { Loading } from '../components/problem.tsx';
import { formatNumber } from '../format.ts';
import { useLoad } from '../load.ts';
import { LedgerSection } from './credits/ledger-section.tsx';
import { UsageSection } from './credits/usage-section.tsx';

export function Credits() {
  const credits = useLoad(() => call('getCredits'), []);
  return (
    <>
      <h1 tabIndex={-1}>Credits</h1>
      <Loading state={credits.state} label="the balance">
        {(c) => (
          <p class="lead">
            Balance <strong>{formatNumber(c.balance)}</strong> credits; {formatNumber(c.consumed)} consumed since the workspace was created.
          </p>
        )}
      </Loading>

      <LedgerSection />

      <UsageSection />
    </>
  );
}
