import { useMediaQuery } from '@mui/material';

/** Mobile = window width of 600 px or less (spec 000 §9, 002 §9). */
export function useIsMobile(): boolean {
  return useMediaQuery('(max-width:600px)', { noSsr: true });
}
