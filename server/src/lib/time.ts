/** Epoch seconds. */
export const nowSec = (): number => Math.floor(Date.now() / 1000);
