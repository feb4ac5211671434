import { useState, type SyntheticEvent } from 'react';
import { Box, ButtonBase, LinearProgress, Link, Tooltip, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';
import { useStatus } from '../../lib/StatusContext';
import { isAdmin, store } from '../../lib/storage';
import { useStoredUser } from '../../lib/useUser';
import { ColorTag } from '../../resources/shared/ColorTag';
import { stringColor } from '../../resources/shared/format';
import { ImageViewer, TextDialog } from './Dialogs';
import { InfoBanner, LogPage, type LogColumn } from './LogPage';
import {
  actionColor,
  actionKey,
  codeColor,
  codeKey,
  drawingDefaultForm,
  formatMs,
  isLong,
  progressPercent,
  showCallbackBanner,
  statusColor,
  statusKey,
  timeTakenColor,
  timeTakenSeconds,
  type Row,
} from './taskRecords';

/** A text cell: short text inline, long text ellipsised and opening the full text on click. */
export function LongText({ text, onOpen, max = 20 }: { text: unknown; onOpen: (t: string) => void; max?: number }) {
  const s = String(text ?? '');
  if (!s)
    return (
      <Typography variant="body2" color="text.disabled">
        -
      </Typography>
    );
  if (!isLong(s, max)) return <Typography variant="body2">{s}</Typography>;
  return (
    <Link
      component="button"
      underline="hover"
      onClick={() => onOpen(s)}
      sx={{ maxWidth: 220, overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap', display: 'block', textAlign: 'left' }}
    >
      {s.slice(0, max)}…
    </Link>
  );
}

/** Time taken (red above 60 s). */
export function Duration({ submit, finish, unit }: { submit: unknown; finish: unknown; unit: 'ms' | 's' }) {
  const translate = useTranslate();
  const s = timeTakenSeconds(submit, finish, unit);
  if (s === null) return <ColorTag tone="grey" label={translate('feat.tasklogs.unfinished')} />;
  return <ColorTag tone={timeTakenColor(s)} label={`${s} s`} />;
}

/** /midjourney: the drawing log. */
export function DrawingLogPage() {
  const translate = useTranslate();
  const user = useStoredUser();
  const admin = isAdmin(user);
  const { status } = useStatus();
  const [image, setImage] = useState<string | null>(null);
  const [text, setText] = useState<{ title: string; body: string } | null>(null);
  const flag = status.mj_notify_enabled ?? store().getItem('mj_notify_enabled');
  const openText = (title: string) => (body: string) => setText({ title, body });

  const columns: LogColumn[] = [
    { key: 'submit_time', label: 'feat.tasklogs.col.submit_time', render: (r) => formatMs(r.submit_time) },
    { key: 'duration', label: 'feat.tasklogs.col.duration', render: (r) => <Duration submit={r.submit_time} finish={r.finish_time} unit="ms" /> },
    ...(admin
      ? [
          {
            key: 'channel',
            label: 'feat.tasklogs.col.channel',
            render: (r: Row) => (r.channel_id ? <ColorTag tone={stringColor(String(r.channel_id))} label={String(r.channel_id)} /> : '-'),
          },
        ]
      : []),
    {
      key: 'type',
      label: 'feat.tasklogs.col.type',
      render: (r) => {
        const k = actionKey(r.action);
        return <ColorTag tone={actionColor(r.action)} label={k ? translate(`feat.tasklogs.action.${k}`) : String(r.action || '-')} />;
      },
    },
    {
      key: 'mj_id',
      label: 'feat.tasklogs.col.task_id',
      render: (r) => (
        <Typography variant="body2" sx={{ fontFamily: 'monospace' }}>
          {r.mj_id || '-'}
        </Typography>
      ),
    },
    {
      key: 'code',
      label: 'feat.tasklogs.col.code',
      render: (r) => <ColorTag tone={codeColor(r.code)} label={translate(`feat.tasklogs.code.${codeKey(r.code)}`)} />,
    },
    {
      key: 'status',
      label: 'feat.tasklogs.col.status',
      render: (r) => <ColorTag tone={statusColor(r.status)} label={translate(`feat.tasklogs.status.${statusKey(r.status)}`)} />,
    },
    {
      key: 'progress',
      label: 'feat.tasklogs.col.progress',
      minWidth: 120,
      render: (r) => {
        const pct = progressPercent(r.progress);
        const failed = statusKey(r.status) === 'failure';
        return (
          <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, minWidth: 110 }}>
            <LinearProgress
              variant="determinate"
              value={pct}
              color={failed ? 'error' : pct >= 100 ? 'success' : 'primary'}
              sx={{ flex: 1, height: 6, borderRadius: 3 }}
            />
            <Typography variant="caption">{pct}%</Typography>
          </Box>
        );
      },
    },
    {
      key: 'image',
      label: 'feat.tasklogs.col.image',
      render: (r) =>
        r.image_url ? (
          <Tooltip title={translate('feat.tasklogs.view_image')}>
            <ButtonBase
              onClick={() => setImage(String(r.image_url))}
              aria-label={translate('feat.tasklogs.view_image')}
              data-testid="view-image"
              sx={{ borderRadius: 1, overflow: 'hidden', border: 1, borderColor: 'divider', width: 32, height: 32, bgcolor: 'action.hover' }}
            >
              <Box
                component="img"
                src={String(r.image_url)}
                alt=""
                loading="lazy"
                sx={{ width: '100%', height: '100%', objectFit: 'cover' }}
                onError={(e: SyntheticEvent<HTMLImageElement>) => {
                  e.currentTarget.style.display = 'none';
                }}
              />
            </ButtonBase>
          </Tooltip>
        ) : (
          '-'
        ),
    },
    { key: 'prompt', label: 'feat.tasklogs.col.prompt', render: (r) => <LongText text={r.prompt} onOpen={openText(translate('feat.tasklogs.col.prompt'))} /> },
    {
      key: 'prompt_en',
      label: 'feat.tasklogs.col.prompt_en',
      render: (r) => <LongText text={r.prompt_en} onOpen={openText(translate('feat.tasklogs.col.prompt_en'))} />,
    },
    {
      key: 'fail_reason',
      label: 'feat.tasklogs.col.fail_reason',
      render: (r) => <LongText text={r.fail_reason} onOpen={openText(translate('feat.tasklogs.fail_title'))} />,
    },
  ];

  return (
    <>
      <LogPage
        kind="mj"
        admin={admin}
        title={translate('feat.tasklogs.mj_title')}
        idLabel="feat.tasklogs.filter.mj_id"
        columns={columns}
        defaults={() => drawingDefaultForm()}
        banner={showCallbackBanner(admin, flag) ? <InfoBanner text={translate('feat.tasklogs.callback_off')} /> : undefined}
      />
      <ImageViewer url={image} onClose={() => setImage(null)} />
      <TextDialog title={text?.title ?? ''} text={text?.body ?? null} onClose={() => setText(null)} />
    </>
  );
}
