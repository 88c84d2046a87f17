/** Functions whose value depends on when or by whom they run: a result computed earlier is not theirs. */
export const VOLATILE =
  /\b(now|now64|today|yesterday|rand\w*|generateUUID\w*|randomString\w*|randomPrintableASCII|randomFixedString|uuid|currentUser|queryID|initialQueryID|rowNumberInAllBlocks|rowNumberInBlock|blockNumber)\s*\(/i;
