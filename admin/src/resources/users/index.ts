import PeopleIcon from '@mui/icons-material/People';
import { UserList } from './UserList';

/** The user resource (admins): the list; create and edit are drawers over it. */
export default {
  list: UserList,
  icon: PeopleIcon,
  options: { label: 'resources.user.name' },
  recordRepresentation: 'username',
};
