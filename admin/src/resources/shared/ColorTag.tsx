import { Chip, alpha, useTheme, type ChipProps } from '@mui/material';
import type { TagColor } from './format';

const COLORS: Record<TagColor, { bg: string; fg: string }> = {
  grey: { bg: '#eceff1', fg: '#546e7a' },
  green: { bg: '#e8f5e9', fg: '#2e7d32' },
  lime: { bg: '#f4f9e0', fg: '#689f38' },
  yellow: { bg: '#fff8e1', fg: '#b28704' },
  orange: { bg: '#fff3e0', fg: '#e65100' },
  red: { bg: '#ffebee', fg: '#c62828' },
  blue: { bg: '#e3f2fd', fg: '#1565c0' },
  purple: { bg: '#f3e5f5', fg: '#7b1fa2' },
  cyan: { bg: '#e0f7fa', fg: '#00838f' },
  teal: { bg: '#e0f2f1', fg: '#00695c' },
  pink: { bg: '#fce4ec', fg: '#ad1457' },
  indigo: { bg: '#e8eaf6', fg: '#283593' },
  amber: { bg: '#fff8e1', fg: '#ff8f00' },
  violet: { bg: '#ede7f6', fg: '#4527a0' },
  'light-blue': { bg: '#e1f5fe', fg: '#0277bd' },
  white: { bg: '#ffffff', fg: '#37474f' },
};

/** The strong colour of a tone (charts draw series in it, so they match the tags). */
export function toneColor(tone: TagColor): string {
  return (COLORS[tone] ?? COLORS.grey).fg;
}

export interface ColorTagProps extends Omit<ChipProps, 'color'> {
  tone?: TagColor;
}

/** A small coloured label (status, type, group…), the console's equivalent of a "tag". */
export const ColorTag = ({ tone = 'grey', sx, size = 'small', ...rest }: ColorTagProps) => {
  const c = COLORS[tone] ?? COLORS.grey;
  const dark = useTheme().palette.mode === 'dark';
  return (
    <Chip
      size={size}
      sx={{
        bgcolor: dark ? alpha(c.fg, 0.22) : c.bg,
        color: dark ? (tone === 'white' ? '#eceff1' : alpha('#ffffff', 0.92)) : c.fg,
        fontWeight: 500,
        border: `1px solid ${c.fg}33`,
        maxWidth: '100%',
        '& .MuiChip-icon': { color: c.fg },
        ...sx,
      }}
      {...rest}
    />
  );
};
