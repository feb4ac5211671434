import { Fragment, useState, type ReactElement } from 'react';
import { Link as RouterLink, useLocation } from 'react-router-dom';
import { useTranslate } from 'react-admin';
import { Box, Collapse, Divider, IconButton, List, ListItemButton, ListItemIcon, ListItemText, ListSubheader, Tooltip } from '@mui/material';
import ExpandLess from '@mui/icons-material/ExpandLess';
import ExpandMore from '@mui/icons-material/ExpandMore';
import ChatIcon from '@mui/icons-material/ChatBubbleOutline';
import ScienceIcon from '@mui/icons-material/ScienceOutlined';
import DashboardIcon from '@mui/icons-material/DashboardOutlined';
import MonitorIcon from '@mui/icons-material/MonitorHeartOutlined';
import KeyIcon from '@mui/icons-material/VpnKeyOutlined';
import ListAltIcon from '@mui/icons-material/ListAlt';
import BrushIcon from '@mui/icons-material/BrushOutlined';
import TaskIcon from '@mui/icons-material/TaskAltOutlined';
import HubIcon from '@mui/icons-material/HubOutlined';
import RedeemIcon from '@mui/icons-material/RedeemOutlined';
import ReceiptIcon from '@mui/icons-material/ReceiptOutlined';
import PeopleIcon from '@mui/icons-material/PeopleOutline';
import SettingsIcon from '@mui/icons-material/SettingsOutlined';
import WalletIcon from '@mui/icons-material/AccountBalanceWalletOutlined';
import PersonIcon from '@mui/icons-material/PersonOutline';
import ChevronLeftIcon from '@mui/icons-material/ChevronLeft';
import ChevronRightIcon from '@mui/icons-material/ChevronRight';
import { chatLinks } from '../lib/status';
import { useStatus } from '../lib/StatusContext';
import { isAdmin, store, type StoredUser } from '../lib/storage';

export const SIDEBAR_WIDTH = 200;
export const SIDEBAR_COLLAPSED_WIDTH = 60;

export interface MenuItemDef {
  key: string;
  /** Label: a translation key, or a literal (chat link names). */
  label: string;
  literal?: boolean;
  to: string;
  icon: ReactElement;
  /** Sub-entries (the chat links). */
  children?: MenuItemDef[];
}

export interface MenuGroupDef {
  key: string;
  title?: string;
  items: MenuItemDef[];
}

/**
 * The side menu for a user and the local flags: playground and chats; console
 * (dashboard if enable_data_export, metrics for admins, tokens, logs, drawing log if enable_drawing,
 * task log if enable_task); admin group for admins; personal group.
 */
export function menuGroups(
  user: StoredUser | null,
  flag: (key: string) => boolean = (k) => store().getItem(k) === 'true',
  chats = chatLinks(),
  chatLink = store().getItem('chat_link') ?? '',
): MenuGroupDef[] {
  const admin = isAdmin(user);
  const top: MenuItemDef[] = [{ key: 'playground', label: 'app.menu.playground', to: '/playground', icon: <ScienceIcon /> }];
  if (chats.length) {
    top.push({
      key: 'chat',
      label: 'app.menu.chat',
      to: '/chat/0',
      icon: <ChatIcon />,
      children: chats.map((c, i) => ({ key: `chat-${i}`, label: c.name, literal: true, to: `/chat/${i}`, icon: <ChatIcon fontSize="small" /> })),
    });
  } else if (chatLink.trim()) {
    // Only the site's chat link (ChatLink) is set: the chat entry opens it with the user's key.
    top.push({ key: 'chat', label: 'app.menu.chat', to: '/chat2link', icon: <ChatIcon /> });
  }
  const consoleItems: MenuItemDef[] = [];
  if (flag('enable_data_export')) consoleItems.push({ key: 'detail', label: 'app.menu.detail', to: '/detail', icon: <DashboardIcon /> });
  if (admin) consoleItems.push({ key: 'performance', label: 'app.menu.performance', to: '/performance', icon: <MonitorIcon /> });
  consoleItems.push({ key: 'token', label: 'app.menu.token', to: '/token', icon: <KeyIcon /> });
  consoleItems.push({ key: 'log', label: 'app.menu.log', to: '/log', icon: <ListAltIcon /> });
  if (flag('enable_drawing')) consoleItems.push({ key: 'midjourney', label: 'app.menu.midjourney', to: '/midjourney', icon: <BrushIcon /> });
  if (flag('enable_task')) consoleItems.push({ key: 'task', label: 'app.menu.task', to: '/task', icon: <TaskIcon /> });
  const groups: MenuGroupDef[] = [
    { key: 'chat', items: top },
    { key: 'console', title: 'app.menu.console', items: consoleItems },
  ];
  if (admin) {
    groups.push({
      key: 'admin',
      title: 'app.menu.admin',
      items: [
        { key: 'channel', label: 'app.menu.channel', to: '/channel', icon: <HubIcon /> },
        { key: 'redemption', label: 'app.menu.redemption', to: '/redemption', icon: <RedeemIcon /> },
        { key: 'topup_order', label: 'app.menu.topup_order', to: '/topup_order', icon: <ReceiptIcon /> },
        { key: 'user', label: 'app.menu.user', to: '/user', icon: <PeopleIcon /> },
        { key: 'setting', label: 'app.menu.setting', to: '/setting', icon: <SettingsIcon /> },
      ],
    });
  }
  groups.push({
    key: 'personal',
    title: 'app.menu.personal_group',
    items: [
      { key: 'topup', label: 'app.menu.topup', to: '/topup', icon: <WalletIcon /> },
      { key: 'personal', label: 'app.menu.personal', to: '/personal', icon: <PersonIcon /> },
    ],
  });
  return groups;
}

/** Paths without the sidebar: home, chat and setup. */
export function sidebarHiddenOn(pathname: string): boolean {
  return pathname === '/' || pathname === '/setup' || pathname === '/chat' || pathname.startsWith('/chat/');
}

export function SideMenu({
  user,
  collapsed,
  onToggle,
  onNavigate,
}: {
  user: StoredUser | null;
  collapsed: boolean;
  onToggle?: () => void;
  onNavigate?: () => void;
}) {
  const translate = useTranslate();
  const { pathname } = useLocation();
  // Re-render when the status (and so the local flags and chats) arrives.
  useStatus();
  const groups = menuGroups(user);
  const active = (to: string) => pathname === to || pathname.startsWith(`${to}/`);
  const [openChat, setOpenChat] = useState(true);
  const renderItem = (item: MenuItemDef, depth: number) => {
    const label = item.literal ? item.label : translate(item.label);
    const parent = !!item.children && !collapsed;
    const selected = parent ? false : active(item.to);
    const button = (
      <ListItemButton
        key={item.key}
        {...(parent ? { onClick: () => setOpenChat((o) => !o) } : { component: RouterLink, to: item.to, onClick: onNavigate })}
        selected={selected}
        data-testid={`menu-${item.key}`}
        sx={{
          mx: 0.75,
          borderRadius: 1.5,
          minHeight: 38,
          px: collapsed ? 1.25 : 1.5,
          pl: collapsed ? 1.25 : 1.5 + depth * 2,
          justifyContent: collapsed ? 'center' : 'flex-start',
        }}
      >
        <ListItemIcon sx={{ minWidth: collapsed ? 0 : 34, color: selected ? 'primary.main' : undefined }}>{item.icon}</ListItemIcon>
        {collapsed ? null : <ListItemText primary={label} primaryTypographyProps={{ noWrap: true, fontSize: 14 }} />}
        {parent ? openChat ? <ExpandLess fontSize="small" /> : <ExpandMore fontSize="small" /> : null}
      </ListItemButton>
    );
    return collapsed ? (
      <Tooltip key={item.key} title={label} placement="right">
        {button}
      </Tooltip>
    ) : (
      button
    );
  };
  return (
    <Box
      component="nav"
      data-testid="side-menu"
      sx={{
        width: collapsed ? SIDEBAR_COLLAPSED_WIDTH : SIDEBAR_WIDTH,
        flexShrink: 0,
        transition: 'width 150ms',
        borderRight: 1,
        borderColor: 'divider',
        bgcolor: 'background.paper',
        display: 'flex',
        flexDirection: 'column',
        overflowX: 'hidden',
        // Desktop: stays in view while the page scrolls (the top bar is 57 px high).
        ...(onToggle ? { position: 'sticky', top: 57, alignSelf: 'flex-start', height: 'calc(100vh - 57px)', overflowY: 'auto' } : { minHeight: '100%' }),
      }}
    >
      <List dense sx={{ flex: 1, py: 0.5 }}>
        {groups.map((g, gi) => (
          <Fragment key={g.key}>
            {gi > 0 && collapsed ? <Divider sx={{ my: 0.5 }} /> : null}
            {g.title && !collapsed ? (
              <ListSubheader disableSticky sx={{ lineHeight: '32px', bgcolor: 'transparent', fontSize: 12 }}>
                {translate(g.title)}
              </ListSubheader>
            ) : null}
            {g.items.map((item) => (
              <Fragment key={item.key}>
                {renderItem(item, 0)}
                {item.children && !collapsed ? (
                  <Collapse in={openChat} unmountOnExit>
                    {item.children.map((c) => renderItem(c, 1))}
                  </Collapse>
                ) : null}
              </Fragment>
            ))}
          </Fragment>
        ))}
      </List>
      {onToggle ? (
        <Box sx={{ borderTop: 1, borderColor: 'divider', display: 'flex', justifyContent: collapsed ? 'center' : 'flex-end', p: 0.5 }}>
          <Tooltip title={translate(collapsed ? 'app.nav.expand' : 'app.nav.collapse')} placement="right">
            <IconButton size="small" onClick={onToggle} data-testid="sidebar-toggle" aria-label={translate(collapsed ? 'app.nav.expand' : 'app.nav.collapse')}>
              {collapsed ? <ChevronRightIcon /> : <ChevronLeftIcon />}
            </IconButton>
          </Tooltip>
        </Box>
      ) : null}
    </Box>
  );
}
