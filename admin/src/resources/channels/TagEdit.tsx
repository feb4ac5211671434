import { useState } from 'react';
import { Alert, Autocomplete, Button, Stack, TextField } from '@mui/material';
import { useNotify, useTranslate } from 'react-admin';
import { SideDrawer, STICKY_ACTIONS_SX } from '../shared/SideDrawer';
import { useGateway } from '../shared/api';
import { useNotifyError } from '../shared/hooks';
import { splitComma } from '../shared/format';
import { isValidJsonObject } from './channelForm';
import { tagEditPayload, type TagRow } from './channelTags';
import { useChannelModels } from './useChannelOps';

/** Tag edit drawer: rename (an empty new tag dissolves the tag), model mapping, groups, models for all channels of the tag. */
export const TagEditDrawer = ({
  row,
  groupsOptions,
  onClose,
  onSaved,
}: {
  row: TagRow | null;
  groupsOptions: string[];
  onClose: () => void;
  onSaved: () => void;
}) => (
  <SideDrawer open={!!row} onClose={onClose} title="res.channel.tag_edit_title" width={560}>
    {row && <TagEditForm row={row} groupsOptions={groupsOptions} onClose={onClose} onSaved={onSaved} />}
  </SideDrawer>
);

const TagEditForm = ({ row, groupsOptions, onClose, onSaved }: { row: TagRow; groupsOptions: string[]; onClose: () => void; onSaved: () => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const dp = useGateway();
  const modelOptions = useChannelModels();
  const original = {
    tag: row.tag,
    model_mapping: '',
    groups: splitComma(row.group),
    models: splitComma(row.children.map((c) => String(c.models ?? '')).join(',')),
  };
  const [newTag, setNewTag] = useState(row.tag);
  const [mapping, setMapping] = useState('');
  const [groups, setGroups] = useState(original.groups);
  const [models, setModels] = useState(original.models);
  const [saving, setSaving] = useState(false);

  const submit = async () => {
    if (!isValidJsonObject(mapping)) return notify('res.channel.msg.mapping_json', { type: 'warning' });
    const body = tagEditPayload(original, { new_tag: newTag, model_mapping: mapping, groups, models });
    if (!body) return notify('res.channel.msg.nothing_changed', { type: 'warning' });
    setSaving(true);
    try {
      await dp.editTag(body as never);
      notify('res.channel.msg.updated', { type: 'success' });
      onSaved();
    } catch (e) {
      notifyError(e);
    } finally {
      setSaving(false);
    }
  };

  return (
    <Stack spacing={2}>
      <Alert severity="info">{translate('res.channel.hint.tag_edit', { n: row.children.length })}</Alert>
      <TextField
        size="small"
        label={translate('res.channel.new_tag')}
        value={newTag}
        onChange={(e) => setNewTag(e.target.value)}
        helperText={translate('res.channel.hint.dissolve')}
      />
      <Autocomplete
        multiple
        freeSolo
        size="small"
        options={groupsOptions}
        value={groups}
        onChange={(_, v) => setGroups(v as string[])}
        renderInput={(p) => <TextField {...p} label={translate('res.channel.fields.group')} />}
      />
      <Autocomplete
        multiple
        freeSolo
        size="small"
        disableCloseOnSelect
        filterSelectedOptions
        options={modelOptions}
        value={models}
        onChange={(_, v) => setModels(Array.from(new Set(v as string[])))}
        renderInput={(p) => <TextField {...p} label={translate('res.channel.fields.models')} />}
      />
      <TextField
        size="small"
        multiline
        minRows={3}
        label={translate('res.channel.fields.model_mapping')}
        value={mapping}
        onChange={(e) => setMapping(e.target.value)}
        helperText={translate('res.channel.hint.tag_mapping')}
        slotProps={{ htmlInput: { style: { fontFamily: 'monospace', fontSize: 13 } } }}
      />
      <Stack direction="row" spacing={1} justifyContent="flex-end" sx={STICKY_ACTIONS_SX} data-testid="drawer-actions">
        <Button onClick={onClose}>{translate('res.common.cancel')}</Button>
        <Button variant="contained" onClick={submit} disabled={saving}>
          {translate('res.common.submit')}
        </Button>
      </Stack>
    </Stack>
  );
};
