/** Which failures are called network failures: only the ones where no answer came back. */
import { describe, expect, it } from 'vitest';
import { ApiCallError, ProspectaClient } from '../../addon/api/client.ts';
import { NetworkError, type HttpPort } from '../../addon/api/http.ts';
import { plainError, PlainError } from '../../addon/features/errors.ts';
import { NotConfigured } from '../../addon/features/runs.ts';

const unreachable: HttpPort = {
  fetch: () => {
    throw new Error('Exception: Address unavailable: https://prospecta.test/v1/api/credits');
  },
  fetchAll: () => {
    throw new Error('Exception: DNS error');
  },
};

describe('plainError', () => {
  it('says the server could not be reached only when the request got no answer', () => {
    const client = new ProspectaClient(unreachable, { baseUrl: 'https://prospecta.test', apiKey: 'k' });
    let thrown: unknown;
    try {
      client.call('getCredits', {});
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(NetworkError);
    expect(plainError(thrown)).toBe(
      'Could not reach the prospecta server (Exception: Address unavailable: https://prospecta.test/v1/api/credits). Check the server URL in Settings.',
    );
  });

  it('words an error of the add-on itself as one, not as a network failure', () => {
    const message = plainError(new Error('Exception: The starting row or column of the range is too small.'));
    expect(message).not.toMatch(/Could not reach|server URL/);
    expect(message).toBe('The add-on ran into a problem in this spreadsheet (Exception: The starting row or column of the range is too small.).');
  });

  it('passes messages already written for the user through as they are', () => {
    expect(plainError(new PlainError('Select the rows to work on (below the header row).'))).toBe('Select the rows to work on (below the header row).');
    expect(plainError(new NotConfigured('Open Settings and enter your API key and server URL first.'))).toBe('Open Settings and enter your API key and server URL first.');
  });

  it("keeps the server's own answers in their words", () => {
    expect(plainError(new ApiCallError(402, 'insufficient_credits', 'the balance is 0 credits', null))).toBe('Not enough credits: the balance is 0 credits');
    expect(plainError(new ApiCallError(404, 'not_found', 'prospect not found', null))).toBe('prospect not found');
  });
});
