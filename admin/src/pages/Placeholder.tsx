import { Title, useTranslate } from 'react-admin';
import { Card, CardContent, Typography } from '@mui/material';
import ConstructionIcon from '@mui/icons-material/ConstructionOutlined';

/** A page a later issue builds: its title and a short note. */
export function Placeholder({ titleKey }: { titleKey: string }) {
  const translate = useTranslate();
  const title = translate(titleKey);
  return (
    <Card variant="outlined" data-testid="placeholder">
      <Title title={title} />
      <CardContent sx={{ textAlign: 'center', py: 6 }}>
        <ConstructionIcon color="disabled" sx={{ fontSize: 48 }} />
        <Typography variant="h5" sx={{ mt: 1 }}>
          {title}
        </Typography>
        <Typography color="text.secondary" sx={{ mt: 1 }}>
          {translate('app.page.placeholder')}
        </Typography>
      </CardContent>
    </Card>
  );
}
