package framework

import (
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/gocurator/curator/retry"
)

// The ensemble tracker (WithEnsembleTracker) follows ConfigPath with a
// Watcher of a view without chroot or namespace, reads the configuration
// at every change and every reconnection (the WatchResync), and hands the
// members' client addresses to trackConfig.

// trackEnsemble runs until the client closes. It sets the watch again if
// it could not be set (retries spent during a long disconnection, say).
func (c *Client) trackEnsemble() {
	defer c.wg.Done()
	// The configuration lives outside the chroot and namespace.
	raw := &Client{core: c.core}
	pause := retry.Pause{Base: 100 * time.Millisecond, Max: 5 * time.Second}
	for !c.isClosed() {
		w, err := raw.Watch(c.ctx, ConfigPath)
		if err != nil {
			if !c.isClosed() {
				c.log.Debug("ensemble tracker: watch failed; trying again", zap.Error(err))
			}
			if pause.Wait(c.ctx) != nil {
				return
			}
			continue
		}
		pause = retry.Pause{Base: pause.Base, Max: pause.Max}
		c.followConfig(raw, w)
	}
}

// followConfig reads the configuration now and at every event of w, until
// w ends.
func (c *Client) followConfig(raw *Client, w *Watcher) {
	defer w.Close()
	read := func() {
		// Config hands what it reads to trackConfig.
		if _, err := raw.Config(c.ctx); err != nil && !c.isClosed() {
			c.log.Debug("ensemble tracker: reading the configuration failed; the next change or reconnection reads it again", zap.Error(err))
		}
	}
	read()
	for range w.Events() {
		// Every event (a change, a resync after a reconnection, even a
		// deletion, which ZooKeeper does not allow) is a reason to read.
		read()
	}
}

// trackConfig makes cfg's members the servers the client connects to from
// its next connection on, if the tracker is on, cfg lists client addresses
// and is not older than the configuration in use. The chroot and the
// namespace are not part of the list and stay as they are.
func (c *Client) trackConfig(cfg EnsembleConfig) {
	if !c.opts.ensemble.track {
		return
	}
	servers := cfg.Servers()
	if len(servers) == 0 {
		return
	}
	c.mu.Lock()
	if cfg.Version < c.configVersion {
		c.mu.Unlock()
		return
	}
	c.configVersion = cfg.Version
	if slices.Equal(servers, c.servers) {
		c.mu.Unlock()
		return
	}
	c.servers = servers
	hosts := c.hosts
	c.mu.Unlock()
	if hosts != nil {
		hosts.Update(servers)
	}
	c.log.Info("ensemble changed; reconnections use its members",
		zap.Strings("servers", servers), zap.Int64("config_version", cfg.Version))
}

// ConnectString returns the connect string the client connects with: its
// servers and chroot, host:port[,host:port...][/chroot]. With the ensemble
// tracker (WithEnsembleTracker) the servers are the current members';
// otherwise those of Connect's connect string (in a normalised form). A
// view's is its client's.
func (c *Client) ConnectString() string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.servers, ",") + c.chroot
}
