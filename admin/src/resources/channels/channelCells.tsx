/** The cells of the channel list; a tag row (tag mode) shows the aggregate of its channels. */
import { useState } from 'react';
import { Box, Stack, TextField, Tooltip, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { useDisplaySettings } from '../shared/hooks';
import { formatQuota, formatTimestamp, parseJsonObject, responseTimeColor, splitComma, stringColor } from '../shared/format';
import { channelTypeColor, channelTypeLabel } from './channelTypes';
import { isTagRow } from './channelTags';
import { useChannelOps, type ChannelRow } from './useChannelOps';
import { useChannelTypes } from './useChannelTypes';

export const NameCell = ({ row, tagMode }: { row: ChannelRow; tagMode: boolean }) => {
  const translate = useTranslate();
  return isTagRow(row) ? (
    <Stack direction="row" spacing={1} alignItems="center">
      <ColorTag tone="indigo" label={translate('res.channel.tag_label', { tag: row.tag })} />
      <Typography variant="caption" color="text.secondary">
        {translate('res.channel.tag_count', { n: row.children.length })}
      </Typography>
    </Stack>
  ) : (
    <Stack direction="row" spacing={1} alignItems="center">
      <span>{row.name}</span>
      {!tagMode && row.tag ? <ColorTag tone={stringColor(row.tag)} variant="outlined" label={row.tag} /> : null}
    </Stack>
  );
};

export const GroupCell = ({ row }: { row: ChannelRow }) => (
  <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'wrap', gap: 0.5, maxWidth: 220 }}>
    {splitComma(row.group).map((g) => (
      <ColorTag key={g} tone={stringColor(g)} label={g} />
    ))}
  </Stack>
);

export const TypeCell = ({ row }: { row: ChannelRow }) => {
  // Until the catalogue answers, the type column shows `#id`.
  const { catalogue } = useChannelTypes();
  return isTagRow(row) ? null : <ColorTag tone={channelTypeColor(catalogue, Number(row.type))} label={channelTypeLabel(catalogue, Number(row.type))} />;
};

export const StatusCell = ({ row }: { row: ChannelRow }) => {
  const translate = useTranslate();
  const s = Number(row.status);
  if (isTagRow(row)) {
    return <ColorTag tone={s === 1 ? 'green' : 'red'} label={translate(s === 1 ? 'res.channel.status.tag_enabled' : 'res.channel.status.tag_disabled')} />;
  }
  if (s === 1) return <ColorTag tone="green" label={translate('res.channel.status.enabled')} />;
  if (s === 2) return <ColorTag tone="red" label={translate('res.channel.status.manual_disabled')} />;
  if (s === 3) {
    const info = parseJsonObject(row.other_info);
    const title = (
      <Box>
        <div>
          {translate('res.channel.status.reason')}: {String(info.status_reason ?? '-')}
        </div>
        <div>
          {translate('res.channel.status.time')}: {formatTimestamp(Number(info.status_time ?? 0))}
        </div>
      </Box>
    );
    return (
      <Tooltip title={title}>
        <span>
          <ColorTag tone="yellow" label={translate('res.channel.status.auto_disabled')} />
        </span>
      </Tooltip>
    );
  }
  return <ColorTag tone="grey" label={translate('res.common.unknown')} />;
};

export const ResponseTimeCell = ({ row }: { row: ChannelRow }) => {
  const translate = useTranslate();
  const rt = Number(row.response_time ?? 0);
  const label = rt ? translate('res.channel.seconds', { s: (rt / 1000).toFixed(2) }) : translate('res.channel.untested');
  const tag = <ColorTag tone={responseTimeColor(rt)} label={label} />;
  if (isTagRow(row)) return tag;
  return <Tooltip title={row.test_time ? `${translate('res.channel.fields.test_time')}: ${formatTimestamp(row.test_time)}` : ''}>{tag}</Tooltip>;
};

/** Used quota; a single channel adds its balance, which a click updates from the upstream. */
export const BalanceCell = ({ row }: { row: ChannelRow }) => {
  const translate = useTranslate();
  const display = useDisplaySettings();
  const { updateBalance } = useChannelOps();
  const used = (
    <Tooltip title={translate('res.channel.fields.used_quota')}>
      <span>
        <ColorTag tone="white" label={formatQuota(row.used_quota, display)} />
      </span>
    </Tooltip>
  );
  if (isTagRow(row)) return used;
  return (
    <Stack direction="row" spacing={0.5}>
      {used}
      <Tooltip title={translate('res.channel.click_balance')}>
        <span>
          <ColorTag tone="grey" clickable onClick={() => updateBalance(row)} label={`$${Number(row.balance ?? 0).toFixed(2)}`} />
        </span>
      </Tooltip>
    </Stack>
  );
};

/** Priority or weight, edited in place: saved on blur or Enter. */
export const NumberCell = ({ row, field }: { row: ChannelRow; field: 'priority' | 'weight' }) => {
  const { saveNumber } = useChannelOps();
  const value = row[field] ?? 0;
  return <InlineNumber key={`${row.id}-${field}-${value}`} value={value} min={field === 'priority' ? -999 : 0} onSave={(v) => saveNumber(row, field, v)} />;
};

const InlineNumber = ({ value, onSave, min }: { value: number; onSave: (v: string) => void; min?: number }) => {
  const [text, setText] = useState(String(value));
  return (
    <TextField
      size="small"
      variant="outlined"
      type="number"
      value={text}
      onChange={(e) => setText(e.target.value)}
      onBlur={() => text !== String(value) && onSave(text)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') (e.target as HTMLInputElement).blur();
      }}
      slotProps={{ htmlInput: { min, step: 1, style: { width: 44, padding: '4px 6px' } } }}
    />
  );
};
