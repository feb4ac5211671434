import { useMediaQuery } from '@mui/material';

/** Mobile = window width of 600 px or less. */
export function useIsMobile(): boolean {
  return useMediaQuery('(max-width:600px)', { noSsr: true });
}
