import KeyIcon from '@mui/icons-material/VpnKey';
import { TokenList } from './TokenList';

/** The token resource: the list; create and edit are drawers over it (/token/create, /token/:id). */
export default {
  list: TokenList,
  icon: KeyIcon,
  options: { label: 'resources.token.name' },
  recordRepresentation: 'name',
};
