import { useState } from 'react';
import { Box, Link, Stack, Tooltip, Typography } from '@mui/material';
import { DataTable, List, useTranslate, type RaRecord } from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { GwPagination } from '../shared/GwPagination';
import { LIST_SX, TABLE_SX } from '../shared/styles';
import { EmptyText } from '../shared/EmptyText';
import { readPageSize } from '../shared/pageSize';
import { useDisplaySettings } from '../shared/hooks';
import { compactNumber, firstTokenColor, formatQuota, formatTimestamp, parseJsonObject, stringColor, elapsedColor } from '../shared/format';
import { storedUserRole } from '../shared/api';
import { firstTokenSeconds, logDetail, logTypeColor, logTypeKey, usedChannels } from './logDisplay';
import { LogFilterBar } from './LogFilterBar';
import { LogStats } from './LogStats';
import { UserInfoDialog } from './UserInfoDialog';
import { LogDetailDialog } from './LogDetailDialog';

/**
 * The log table fits its box: cells may wrap (time on two lines, tags wrap), the detail text is
 * clipped to two lines, and what still does not fit scrolls inside the table (a visible scrollbar),
 * never the page. A row click opens the whole record.
 */
const LOG_TABLE_SX = {
  ...TABLE_SX,
  '& .RaDataTable-rowCell': { whiteSpace: 'normal', px: 1, verticalAlign: 'top' },
  '& .RaDataTable-headerCell': { fontWeight: 600, whiteSpace: 'nowrap', px: 1 },
  '& .RaDataTable-tableWrapper': { overflowX: 'auto', scrollbarGutter: 'stable' },
  '& .RaDataTable-row': { cursor: 'pointer' },
} as const;

type Row = RaRecord;

/** Usage logs: admins see every user's logs with the channel, username and retry columns. */
export const LogList = () => {
  const admin = storedUserRole() >= 10;
  return (
    <List
      resource="log"
      perPage={readPageSize('log')}
      actions={false}
      pagination={<GwPagination />}
      empty={false}
      exporter={false}
      title="res.log.title"
      storeKey={false}
      sx={LIST_SX}
    >
      <Box>
        <LogFilterBar admin={admin} />
        <LogStats admin={admin} />
        <LogTable admin={admin} />
      </Box>
    </List>
  );
};

const isConsume = (r: Record<string, unknown>) => Number(r.type) === 2 || Number(r.type) === 0;
/** Rows of a relay call: consumption, and failed calls (type 5: model, channel, token, group too). */
const isCall = (r: Record<string, unknown>) => isConsume(r) || Number(r.type) === 5;

const LogTable = ({ admin }: { admin: boolean }) => {
  const translate = useTranslate();
  const display = useDisplaySettings();
  const [userLookup, setUserLookup] = useState<number | null>(null);
  const [open, setOpen] = useState<Row | null>(null);
  return (
    <>
      <DataTable<Row>
        rowClick={(_id, _res, record) => {
          setOpen(record as Row);
          return false;
        }}
        bulkActionButtons={false}
        sx={LOG_TABLE_SX}
        empty={<EmptyText text="res.log.empty" />}
      >
        <DataTable.Col
          source="created_at"
          label="res.log.fields.created_at"
          disableSort
          render={(r) => {
            const [day, time] = formatTimestamp(r.created_at).split(' ');
            return (
              <Box sx={{ minWidth: 80 }}>
                <div>{day}</div>
                {time && <div>{time}</div>}
              </Box>
            );
          }}
        />
        {admin && (
          <DataTable.Col
            source="channel"
            label="res.log.fields.channel"
            disableSort
            render={(r) =>
              isCall(r) && r.channel ? (
                <Tooltip title={r.channel_name || ''}>
                  <span>
                    <ColorTag tone={stringColor(String(r.channel))} label={String(r.channel)} />
                  </span>
                </Tooltip>
              ) : null
            }
          />
        )}
        {admin && (
          <DataTable.Col
            source="username"
            label="res.log.fields.username"
            disableSort
            render={(r) =>
              r.username ? (
                <Link
                  component="button"
                  underline="hover"
                  onClick={(e) => {
                    e.stopPropagation();
                    setUserLookup(Number(r.user_id));
                  }}
                >
                  {r.username}
                </Link>
              ) : null
            }
          />
        )}
        <DataTable.Col
          source="token_name"
          label="res.log.fields.token_name"
          disableSort
          render={(r) => (isCall(r) && r.token_name ? <ColorTag tone="grey" label={r.token_name} /> : null)}
        />
        <DataTable.Col
          source="group"
          label="res.log.fields.group"
          disableSort
          render={(r) => {
            const g = r.group || parseJsonObject(r.other).group;
            return isCall(r) && g ? <ColorTag tone={stringColor(String(g))} label={String(g)} /> : null;
          }}
        />
        <DataTable.Col
          source="type"
          label="res.log.fields.type"
          disableSort
          render={(r) => <ColorTag tone={logTypeColor(Number(r.type))} label={translate(`res.log.type.${logTypeKey(Number(r.type))}`)} />}
        />
        <DataTable.Col
          source="model_name"
          label="res.log.fields.model_name"
          disableSort
          render={(r) => {
            if (!isCall(r) || !r.model_name) return null;
            const o = parseJsonObject(r.other);
            const tag = <ColorTag tone={stringColor(String(r.model_name))} label={r.model_name} />;
            return o.is_model_mapped && o.upstream_model_name ? (
              <Tooltip title={`${translate('res.log.upstream_model')}: ${o.upstream_model_name}`}>
                <span>{tag}</span>
              </Tooltip>
            ) : (
              tag
            );
          }}
        />
        <DataTable.Col
          source="use_time"
          label="res.log.fields.use_time"
          disableSort
          render={(r) => {
            if (!isConsume(r)) return null;
            const t = Number(r.use_time) || 0;
            const frt = firstTokenSeconds(r.other);
            return (
              <Stack direction="row" sx={{ flexWrap: 'wrap', gap: 0.5, minWidth: 90 }}>
                <ColorTag tone={elapsedColor(t)} label={`${t} s`} />
                {frt !== null && (
                  <Tooltip title={translate('res.log.first_token')}>
                    <span>
                      <ColorTag tone={firstTokenColor(frt)} label={`${frt.toFixed(1)} s`} />
                    </span>
                  </Tooltip>
                )}
                <ColorTag tone={r.is_stream ? 'blue' : 'purple'} label={translate(r.is_stream ? 'res.log.stream' : 'res.log.non_stream')} />
              </Stack>
            );
          }}
        />
        {/* Col, not NumberCol: NumberCol draws its own NumberField and ignores `render`. */}
        <DataTable.Col
          source="prompt_tokens"
          label="res.log.fields.prompt_tokens"
          align="right"
          disableSort
          render={(r) => (isConsume(r) ? compactNumber(r.prompt_tokens) : null)}
        />
        <DataTable.Col
          source="completion_tokens"
          label="res.log.fields.completion_tokens"
          align="right"
          disableSort
          render={(r) => (isConsume(r) ? compactNumber(r.completion_tokens) : null)}
        />
        <DataTable.Col
          source="quota"
          label="res.log.fields.quota"
          align="right"
          disableSort
          render={(r) => (isConsume(r) ? formatQuota(r.quota, display) : Number(r.type) === 1 ? formatQuota(r.quota, display) : null)}
        />
        <DataTable.Col
          source="detail"
          label="res.log.fields.detail"
          disableSort
          render={(r) => {
            const d = logDetail(r as never);
            const text = d.parts.length ? d.parts.map((p) => translate(p.key, p.params)).join('  ') : (d.text ?? '');
            return (
              <Tooltip title={translate('res.log.open_detail')}>
                <Typography
                  variant="body2"
                  data-testid="log-detail-cell"
                  sx={{
                    minWidth: 120,
                    maxWidth: 260,
                    overflow: 'hidden',
                    display: '-webkit-box',
                    WebkitLineClamp: 2,
                    WebkitBoxOrient: 'vertical',
                    wordBreak: 'break-word',
                  }}
                >
                  {text}
                </Typography>
              </Tooltip>
            );
          }}
        />
        {admin && (
          <DataTable.Col
            source="retry"
            label="res.log.fields.retry"
            disableSort
            render={(r) => {
              const used = usedChannels(r.other);
              return used.length > 1 ? <Typography variant="body2">{translate('res.log.retry_path', { path: used.join(' → ') })}</Typography> : null;
            }}
          />
        )}
      </DataTable>
      <UserInfoDialog id={userLookup} onClose={() => setUserLookup(null)} />
      <LogDetailDialog row={open} display={display} onClose={() => setOpen(null)} />
    </>
  );
};
