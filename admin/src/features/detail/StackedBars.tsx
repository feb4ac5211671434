import { useEffect, useRef, useState } from 'react';
import { Box, Typography, useTheme } from '@mui/material';
import { bucketLabel, labelStride, niceScale, stackTotals, type Granularity, type Series } from './usageSeries';

/** Series colours (stable by position: the largest model first). */
export const PALETTE = ['#1976d2', '#ef6c00', '#2e7d32', '#8e24aa', '#00838f', '#c62828', '#f9a825', '#5d4037', '#546e7a'];

const TIP_W = 210;

/** The tooltip sits right of the hovered bar, or left of it when it would overflow. */
function tipLeft(barX: number, slot: number, width: number): number {
  const right = barX + slot + 8;
  return right + TIP_W <= width ? right : Math.max(0, barX - TIP_W - 8);
}

interface Props {
  axis: number[];
  series: Series[];
  granularity: Granularity;
  format: (v: number) => string;
  seriesName: (name: string) => string;
  height?: number;
  /** whole-number ticks (counts, tokens) */
  integer?: boolean;
  /** Colour of a series by name (the screen's model colours); by position when absent. */
  colorOf?: (name: string) => string | undefined;
}

/**
 * Stacked bars drawn as plain SVG (no chart library: keeps the bundle and the build small).
 * Hovering a bar shows its bucket's breakdown.
 */
export function StackedBars({ axis, series, granularity, format, seriesName, height = 280, integer = false, colorOf }: Props) {
  const fill = (name: string, si: number) => colorOf?.(name) ?? PALETTE[si % PALETTE.length];
  const theme = useTheme();
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(600);
  const [hover, setHover] = useState<number | null>(null);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => setWidth(Math.max(240, el.clientWidth));
    update();
    const ro = typeof ResizeObserver !== 'undefined' ? new ResizeObserver(update) : undefined;
    ro?.observe(el);
    return () => ro?.disconnect();
  }, []);

  const totals = stackTotals(series, axis.length);
  const { max, step } = niceScale(Math.max(0, ...totals), 4, integer);
  const left = 64;
  const right = 12;
  const top = 12;
  const bottom = 40;
  const plotW = Math.max(10, width - left - right);
  const plotH = height - top - bottom;
  const slot = axis.length ? plotW / axis.length : plotW;
  const barW = Math.max(1, Math.min(48, slot * 0.7));
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const stride = labelStride(axis.length, Math.floor(plotW / (granularity === 'hour' ? 90 : 56)));
  const grid = theme.palette.divider;
  const text = theme.palette.text.secondary;
  const ticks: number[] = [];
  for (let v = 0; v <= max + step / 2; v += step) ticks.push(v);

  return (
    <Box ref={ref} sx={{ position: 'relative', width: '100%' }}>
      <svg width={width} height={height} role="img" style={{ display: 'block' }} onMouseLeave={() => setHover(null)}>
        {ticks.map((v) => (
          <g key={v}>
            <line x1={left} x2={left + plotW} y1={y(v)} y2={y(v)} stroke={grid} strokeDasharray={v === 0 ? undefined : '3 3'} />
            <text x={left - 6} y={y(v)} dy="0.32em" textAnchor="end" fontSize={11} fill={text}>
              {format(v)}
            </text>
          </g>
        ))}
        {axis.map((t, i) => {
          const x = left + i * slot + (slot - barW) / 2;
          let acc = 0;
          return (
            <g key={t} onMouseEnter={() => setHover(i)}>
              <rect x={left + i * slot} y={top} width={slot} height={plotH} fill={hover === i ? theme.palette.action.hover : 'transparent'} />
              {series.map((s, si) => {
                const v = s.values[i];
                if (!v) return null;
                const y0 = y(acc);
                acc += v;
                const y1 = y(acc);
                return <rect key={s.name} x={x} y={y1} width={barW} height={Math.max(0.5, y0 - y1)} fill={fill(s.name, si)} />;
              })}
              {i % stride === 0 && (
                <text x={left + i * slot + slot / 2} y={top + plotH + 16} textAnchor="middle" fontSize={11} fill={text}>
                  {bucketLabel(t, granularity)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      {hover !== null && axis[hover] !== undefined && (
        <Box
          sx={{
            position: 'absolute',
            top: 8,
            left: tipLeft(left + hover * slot, slot, width),
            width: TIP_W,
            p: 1,
            bgcolor: 'background.paper',
            border: 1,
            borderColor: 'divider',
            borderRadius: 1,
            boxShadow: 2,
            pointerEvents: 'none',
            zIndex: 2,
          }}
        >
          <Typography variant="caption" sx={{ fontWeight: 600, display: 'block' }}>
            {bucketLabel(axis[hover], granularity)} · {format(totals[hover])}
          </Typography>
          {series.map((s, si) =>
            s.values[hover] ? (
              <Box key={s.name} sx={{ display: 'flex', alignItems: 'center', gap: 0.5 }}>
                <Box sx={{ width: 8, height: 8, borderRadius: '2px', bgcolor: fill(s.name, si), flex: 'none' }} />
                <Typography variant="caption" sx={{ flex: 1, overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }}>
                  {seriesName(s.name)}
                </Typography>
                <Typography variant="caption">{format(s.values[hover])}</Typography>
              </Box>
            ) : null,
          )}
        </Box>
      )}
      <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 1.5, px: 1, pt: 0.5 }}>
        {series.map((s, si) => (
          <Box key={s.name} sx={{ display: 'flex', alignItems: 'center', gap: 0.5 }}>
            <Box sx={{ width: 10, height: 10, borderRadius: '2px', bgcolor: fill(s.name, si) }} data-testid={`legend-${s.name}`} />
            <Typography variant="caption">{seriesName(s.name)}</Typography>
          </Box>
        ))}
      </Box>
    </Box>
  );
}
