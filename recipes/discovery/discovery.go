package discovery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/telemetry"
	"github.com/gocurator/curator/recipes/node"
)

// ErrOwnedByOtherSession is node.ErrOwnedByOtherSession: Register found the
// instance's path held by an ephemeral node of another session (the same
// id registered by another process, or by this service's previous process
// whose session has not expired yet). That node is never deleted; see
// WaitForOwner and FailIfOwned.
var ErrOwnedByOtherSession = node.ErrOwnedByOtherSession

// scopeName is the OpenTelemetry scope of the package's metrics.
const scopeName = "github.com/gocurator/curator/recipes/discovery"

// Discovery registers service instances and queries them, under one base
// path, as Curator's ServiceDiscovery does and with its layout, so Go and
// Java (Spring Cloud Zookeeper, Dubbo) services find each other. It is safe
// for concurrent use. A nil *Discovery returns ErrNilHandle.
type Discovery struct {
	c    *framework.Client
	base string
	o    options
	log  *zap.Logger
	bad  metric.Int64Counter

	done atomic.Bool // closed, for the picks that must not take mu

	mu       sync.Mutex
	closed   bool
	regs     map[instanceKey]*registration
	cleanups map[instanceKey]chan struct{} // closed when an abandoned write's clean-up is done
	closers  map[any]func() error          // caches and providers made here
}

// registration is one instance registered by this Discovery.
type registration struct {
	mu   sync.Mutex // serializes Register, Update and Unregister of the instance
	inst Instance
	node *node.Node // the ephemeral kinds; nil for persistent ones
	path string
	data []byte // a persistent node's data as last written; nil if unknown
	gone bool   // unregistered: a Register must make a new registration
}

// New returns a Discovery of the services under basePath (Curator's
// ServiceDiscoveryBuilder.basePath), on client c. It does no I/O. An
// invalid base path or a nil client is reported by every call.
func New(c *framework.Client, basePath string, opts ...Option) *Discovery {
	o := options{maxSize: DefaultMaxInstanceSize}
	for _, opt := range opts {
		opt(&o)
	}
	log := o.log
	if log == nil {
		log = c.Logger().Named("discovery")
	}
	var bad metric.Int64Counter
	if c != nil {
		m := c.MeterProvider().Meter(scopeName, metric.WithInstrumentationVersion(telemetry.Version()))
		bad, _ = m.Int64Counter("curator.discovery.malformed", metric.WithUnit("{instance}"),
			metric.WithDescription("Instance nodes skipped because their data is not Curator's ServiceInstance JSON."))
	}
	return &Discovery{c: c, base: basePath, o: o, log: log, bad: bad,
		regs: map[instanceKey]*registration{}, closers: map[any]func() error{},
		cleanups: map[instanceKey]chan struct{}{}}
}

func (d *Discovery) check() error {
	if d == nil {
		return ErrNilHandle
	}
	if d.c == nil {
		return ErrNilClient
	}
	if err := framework.ValidatePath(d.base); err != nil {
		return fmt.Errorf("discovery %q: %w", d.base, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return nil
}

func (d *Discovery) servicePath(name string) string { return framework.JoinPath(d.base, name) }

func (d *Discovery) instancePath(name, id string) string {
	return framework.JoinPath(d.servicePath(name), id)
}

// prepare validates inst, fills what Register fills, and encodes it.
func (d *Discovery) prepare(inst Instance) (Instance, []byte, error) {
	if inst.Address == "" {
		inst.Address = localAddress()
	}
	if err := inst.validate(); err != nil {
		return inst, nil, err
	}
	if inst.ServiceType == "" {
		inst.ServiceType = Dynamic
	}
	if inst.RegistrationTimeUTC == 0 {
		inst.RegistrationTimeUTC = time.Now().UnixMilli()
	}
	if inst.Enabled == nil && d.o.enabledField {
		inst.Enabled = Bool(true)
	}
	data, err := inst.MarshalJSON()
	if err != nil {
		return inst, nil, err
	}
	if len(data) > d.o.maxSize {
		return inst, nil, fmt.Errorf("%w: service %q instance %q: %d bytes of JSON, at most %d",
			ErrTooLarge, inst.Name, inst.ID, len(data), d.o.maxSize)
	}
	return inst, data, nil
}

// Register registers inst: it writes the instance node
// <basePath>/<Name>/<ID> (for DynamicSequential, <ID><sequence>) and
// returns once it exists. Missing parents are made as containers. Fields
// left empty get the defaults of Curator's ServiceInstanceBuilder: an
// empty ID a random UUID, an empty Address this host's first
// non-loopback, non-link-local address (IPv4 first; left empty on a host
// with none), a zero RegistrationTimeUTC now; an empty ServiceType is
// Dynamic. RegisterInstance reports the instance as registered, the
// chosen ID included: an instance registered without one can only be
// unregistered by Close otherwise.
//
// Dynamic instances are kept registered until Unregister or Close
// through a node.Node: a reconnection in the same session changes nothing
// (Curator deletes and re-creates every instance then, a flap for every
// watcher); after the session is lost the instance is registered again in
// the new session, with the data of the latest Update, once the old node
// has gone. A node of another session at a Dynamic instance's path (this
// service's previous process, restarted before its session expired) is
// never deleted unless TakeOver: Register waits for it to go, logging a
// warning, and if ctx ends first returns an error matching ctx's and
// ErrOwnedByOtherSession (FailIfOwned: ErrOwnedByOtherSession at once;
// TakeOver: Curator's way, the node is deleted and ours made).
// Static and Permanent instances are written as PERSISTENT nodes (an
// existing one is overwritten, as Curator does).
//
// Registering an instance that is registered here already updates it
// (Update). On failure, or when ctx ends first (its error), nothing is
// left registered. Errors: ErrInvalidInstance, ErrTooLarge,
// ErrOwnedByOtherSession, ErrClosed, the client's.
func (d *Discovery) Register(ctx context.Context, inst Instance) error {
	_, err := d.RegisterInstance(ctx, inst)
	return err
}

// RegisterInstance is Register, returning the instance as registered:
// with the defaults Register filled in (ID, Address,
// RegistrationTimeUTC, ServiceType) and, for DynamicSequential, the ID
// still the prefix of the sequential node's name. On failure it returns
// the zero Instance and Register's error, and nothing is left registered.
func (d *Discovery) RegisterInstance(ctx context.Context, inst Instance) (Instance, error) {
	if err := d.check(); err != nil {
		return Instance{}, err
	}
	if inst.ID == "" {
		inst.ID = uuid.NewString()
	}
	inst, data, err := d.prepare(inst)
	if err != nil {
		return Instance{}, err
	}
	k := instanceKey{inst.Name, inst.ID}
	if err := d.awaitCleanup(ctx, k); err != nil {
		return Instance{}, err
	}
	for {
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			return Instance{}, ErrClosed
		}
		reg := d.regs[k]
		if reg == nil {
			reg = &registration{}
			d.regs[k] = reg
		}
		d.mu.Unlock()

		reg.mu.Lock()
		if reg.gone {
			// Unregistered while we waited for its lock: start afresh.
			reg.mu.Unlock()
			continue
		}
		if reg.path != "" {
			err := d.update(ctx, reg, inst, data)
			reg.mu.Unlock()
			if err != nil {
				return Instance{}, err
			}
			return inst, nil
		}
		err := d.register(ctx, reg, inst, data)
		if err != nil {
			reg.gone = true
			d.mu.Lock()
			if d.regs[k] == reg {
				delete(d.regs, k)
			}
			d.mu.Unlock()
		}
		reg.mu.Unlock()
		if err != nil {
			return Instance{}, err
		}
		return inst, nil
	}
}

// register makes reg's node; reg.mu is held.
func (d *Discovery) register(ctx context.Context, reg *registration, inst Instance, data []byte) error {
	path := d.instancePath(inst.Name, inst.ID)
	if inst.ServiceType.persistent() {
		if existed, err := d.writePersistent(ctx, path, data); err != nil {
			if !existed {
				// Our create may have been sent and be applied after
				// this call returns: look once it has had its turn.
				d.inBackground(instanceKey{inst.Name, inst.ID}, func(bctx context.Context) { _ = d.removeIfOurs(bctx, path, data) })
			}
			return fmt.Errorf("discovery: register %s: %w", path, err)
		}
		reg.inst, reg.path, reg.data = inst, path, data
		d.log.Info("registered", zap.String("service", inst.Name), zap.String("id", inst.ID), zap.String("type", string(inst.ServiceType)))
		return nil
	}
	mode := framework.Ephemeral
	if inst.ServiceType == DynamicSequential {
		mode = framework.EphemeralSequential
	}
	// The node logs its registrations and losses itself, with the
	// instance named in each line: no listener of ours (a goroutine per
	// registration) is needed for them.
	log := d.log.With(zap.String("service", inst.Name), zap.String("id", inst.ID))
	opts := []node.Option{node.WithMode(mode), node.WithLogger(log)}
	switch {
	case d.o.failIfOwned:
		opts = append(opts, node.FailIfOwned())
	case d.o.takeOver && mode == framework.Ephemeral:
		opts = append(opts, node.TakeOver())
	}
	n := node.New(d.c, path, data, opts...)
	if err := n.Start(ctx); err != nil {
		_ = n.Close(ctx)
		if errors.Is(err, ErrOwnedByOtherSession) && ctx.Err() != nil {
			// node's error names node's options; ours are these.
			return fmt.Errorf("discovery: register %s: %w (here: discovery.TakeOver or discovery.FailIfOwned)", path, err)
		}
		return fmt.Errorf("discovery: register %s: %w", path, err)
	}
	reg.inst, reg.node, reg.path = inst, n, n.Path()
	return nil
}

// writePersistent creates or overwrites a Static or Permanent instance.
// existed reports that the node was there before (an error then leaves
// it there, with its data or ours); otherwise an error may still leave
// ours, made by a create the server applies after ctx ended.
func (d *Discovery) writePersistent(ctx context.Context, path string, data []byte) (existed bool, err error) {
	_, err = d.c.Create(ctx, path, data, framework.WithMode(framework.Persistent), framework.CreatingParentContainers())
	if !errors.Is(err, zk.ErrNodeExists) {
		return false, err
	}
	st, err := d.c.Exists(ctx, path)
	if err != nil {
		return true, err
	}
	if st != nil && st.EphemeralOwner != 0 {
		return true, fmt.Errorf("%w: session 0x%x", ErrOwnedByOtherSession, st.EphemeralOwner)
	}
	if _, err := d.c.Set(ctx, path, data, -1); err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			return d.writePersistent(ctx, path, data)
		}
		return true, err
	}
	return true, nil
}

// cleanupTimeout bounds a clean-up that goes on after the call that
// started it has returned.
const cleanupTimeout = 30 * time.Second

// inBackground runs the clean-up of instance k's write abandoned when its
// call's ctx ended: the request may still reach the server, and ZooKeeper
// applies a session's requests in order, so a read sent after it sees its
// effect. It runs on a context of its own, bounded by cleanupTimeout,
// after k's earlier clean-ups, and ends at once when the client closes.
// The next Register, Update or Unregister of k waits for it
// (awaitCleanup): a clean-up never deletes what a later call wrote.
func (d *Discovery) inBackground(k instanceKey, fn func(ctx context.Context)) {
	done := make(chan struct{})
	d.mu.Lock()
	prev := d.cleanups[k]
	d.cleanups[k] = done
	d.mu.Unlock()
	go func() {
		defer func() {
			d.mu.Lock()
			if d.cleanups[k] == done {
				delete(d.cleanups, k)
			}
			d.mu.Unlock()
			close(done)
		}()
		if prev != nil {
			<-prev
		}
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		fn(ctx)
	}()
}

// awaitCleanup waits until no clean-up of instance k is pending, or ctx
// ends (its error).
func (d *Discovery) awaitCleanup(ctx context.Context, k instanceKey) error {
	for {
		d.mu.Lock()
		ch := d.cleanups[k]
		d.mu.Unlock()
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
			// Another may have been queued meanwhile: look again.
		case <-ctx.Done():
			return fmt.Errorf("discovery: waiting for the clean-up of an abandoned write of %s/%s: %w", k.name, k.id, ctx.Err())
		}
	}
}

// removeIfOurs deletes the persistent instance node at path if it holds
// data (any data, for data nil): the one an abandoned write of ours left,
// never another registration of the same id made since.
func (d *Discovery) removeIfOurs(ctx context.Context, path string, data []byte) error {
	got, st, err := d.c.Get(ctx, path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case err != nil:
		d.log.Warn("an abandoned registration may be left", zap.String("path", path), zap.Error(err))
		return err
	case st.EphemeralOwner != 0 || data != nil && !bytes.Equal(got, data):
		return nil
	}
	err = d.c.Delete(ctx, path, framework.Quietly(), framework.Guaranteed(), framework.WithVersion(st.Version))
	if errors.Is(err, zk.ErrBadVersion) {
		// Written since: another registration's now.
		return nil
	}
	return err
}

// Update writes inst's new data onto its registration (Curator's
// updateService): one setData, no delete. A Dynamic instance keeps the
// data for every re-registration after a session loss (CURATOR-146,
// CURATOR-181). The instance must have been registered here
// (ErrNotRegistered otherwise), with the same ServiceType. If the node is
// being registered again when ctx ends, the data still goes with it.
func (d *Discovery) Update(ctx context.Context, inst Instance) error {
	if err := d.check(); err != nil {
		return err
	}
	inst, data, err := d.prepare(inst)
	if err != nil {
		return err
	}
	k := instanceKey{inst.Name, inst.ID}
	if err := d.awaitCleanup(ctx, k); err != nil {
		return err
	}
	d.mu.Lock()
	reg := d.regs[k]
	d.mu.Unlock()
	if reg == nil {
		return fmt.Errorf("%w: service %q instance %q", ErrNotRegistered, inst.Name, inst.ID)
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.gone || reg.path == "" {
		return fmt.Errorf("%w: service %q instance %q", ErrNotRegistered, inst.Name, inst.ID)
	}
	return d.update(ctx, reg, inst, data)
}

// update writes data onto reg; reg.mu is held.
func (d *Discovery) update(ctx context.Context, reg *registration, inst Instance, data []byte) error {
	if inst.ServiceType != reg.inst.ServiceType {
		return fmt.Errorf("%w: service %q instance %q is registered as %s, not %s",
			ErrInvalidInstance, inst.Name, inst.ID, reg.inst.ServiceType, inst.ServiceType)
	}
	reg.inst = inst
	if reg.node != nil {
		if err := reg.node.SetData(ctx, data); err != nil {
			return fmt.Errorf("discovery: update %s: %w", reg.path, err)
		}
		return nil
	}
	if _, err := d.writePersistent(ctx, reg.path, data); err != nil {
		// The write may land yet: the data to delete at Unregister may
		// be either.
		reg.data = nil
		return fmt.Errorf("discovery: update %s: %w", reg.path, err)
	}
	reg.data = data
	return nil
}

// Unregister removes inst (by name and id): its node is deleted, and a
// Dynamic instance is no longer registered again. The delete is
// guaranteed and owner-checked: if the connection is down or ctx ends
// first it goes on in the background (Unregister returns that error),
// and it never deletes a node another session made, so an Unregister
// racing a reconnection leaves no instance behind (CURATOR-164) and
// deletes nobody else's. An instance not registered here is deleted only
// if it is Static or Permanent (a persistent registration of an earlier
// process); otherwise Unregister does nothing and returns nil.
func (d *Discovery) Unregister(ctx context.Context, inst Instance) error {
	if err := d.check(); err != nil {
		return err
	}
	k := instanceKey{inst.Name, inst.ID}
	if err := d.awaitCleanup(ctx, k); err != nil {
		return err
	}
	d.mu.Lock()
	reg := d.regs[k]
	d.mu.Unlock()
	if reg == nil {
		if !inst.ServiceType.persistent() || segment(inst.Name) != nil || segment(inst.ID) != nil {
			return nil
		}
		return d.deletePersistent(ctx, k, d.instancePath(inst.Name, inst.ID), nil)
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.gone {
		return nil
	}
	reg.gone = true
	d.mu.Lock()
	if d.regs[k] == reg {
		delete(d.regs, k)
	}
	d.mu.Unlock()
	return d.unregister(ctx, reg)
}

// unregister deletes reg's node; reg.mu is held.
func (d *Discovery) unregister(ctx context.Context, reg *registration) error {
	if reg.node == nil {
		return d.deletePersistent(ctx, instanceKey{reg.inst.Name, reg.inst.ID}, reg.path, reg.data)
	}
	err := reg.node.Close(ctx)
	if err != nil {
		return fmt.Errorf("discovery: unregister %s: %w", reg.path, err)
	}
	d.log.Info("unregistered", zap.String("service", reg.inst.Name), zap.String("id", reg.inst.ID))
	return nil
}

// deletePersistent deletes a Static or Permanent instance holding data
// (any, for nil). If ctx ends or the connection fails first, the delete
// goes on in the background (the error is returned), as a guaranteed
// delete does: Unregister leaves no instance behind.
func (d *Discovery) deletePersistent(ctx context.Context, k instanceKey, path string, data []byte) error {
	err := d.removeIfOurs(ctx, path, data)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil || retriable(err) {
		d.inBackground(k, func(bctx context.Context) { _ = d.removeIfOurs(bctx, path, data) })
	}
	return fmt.Errorf("discovery: unregister %s: %w", path, err)
}

// retriable reports whether err is a connection problem after which the
// request may or may not have been applied.
func retriable(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrSessionMoved) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, zk.ErrNoServer)
}

// Names returns the names of the services under the base path, sorted
// (Curator's queryForNames); none if the base path does not exist.
func (d *Discovery) Names(ctx context.Context) ([]string, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	names, _, err := d.c.Children(ctx, d.base)
	if errors.Is(err, zk.ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery: names: %w", err)
	}
	slices.Sort(names)
	return names, nil
}

// Instances reads every instance of service name from ZooKeeper, sorted
// by node name (Curator's queryForInstances); none if the service does not
// exist. A node whose data is not an instance (another registrant's
// malformed JSON) is skipped, logged at Warn and counted in the metric
// curator.discovery.malformed; it never hides the valid instances. A node
// deleted while it is read is left out.
func (d *Discovery) Instances(ctx context.Context, name string) ([]Instance, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if err := segment(name); err != nil {
		return nil, fmt.Errorf("%w: service name: %v", ErrInvalidInstance, err)
	}
	dir := d.servicePath(name)
	ids, _, err := d.c.Children(ctx, dir)
	if errors.Is(err, zk.ErrNoNode) {
		return []Instance{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovery: instances of %s: %w", name, err)
	}
	slices.Sort(ids)
	out := make([]Instance, 0, len(ids))
	for _, id := range ids {
		inst, err := d.read(ctx, framework.JoinPath(dir, id))
		switch {
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, ErrMalformed):
			continue
		case err != nil:
			return nil, fmt.Errorf("discovery: instances of %s: %w", name, err)
		}
		out = append(out, inst)
	}
	return out, nil
}

// Instance reads the instance id of service name (Curator's
// queryForInstance). A DynamicSequential instance, whose node is named
// <id><sequence>, is found by its id too (Curator finds it only by its
// node name). ErrNotFound if there is none; a node that is not an
// instance is an error wrapping ErrMalformed.
func (d *Discovery) Instance(ctx context.Context, name, id string) (Instance, error) {
	if err := d.check(); err != nil {
		return Instance{}, err
	}
	if err := segment(name); err != nil {
		return Instance{}, fmt.Errorf("%w: service name: %v", ErrInvalidInstance, err)
	}
	if err := segment(id); err != nil {
		return Instance{}, fmt.Errorf("%w: id: %v", ErrInvalidInstance, err)
	}
	inst, err := d.read(ctx, d.instancePath(name, id))
	if !errors.Is(err, zk.ErrNoNode) {
		return inst, err
	}
	// A sequential node: <id> and ten digits.
	dir := d.servicePath(name)
	children, _, err := d.c.Children(ctx, dir)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return Instance{}, fmt.Errorf("discovery: instance %s of %s: %w", id, name, err)
	}
	slices.Sort(children)
	for _, child := range children {
		if !sequentialOf(child, id) {
			continue
		}
		inst, err := d.read(ctx, framework.JoinPath(dir, child))
		if err == nil && inst.ID == id {
			return inst, nil
		}
	}
	return Instance{}, fmt.Errorf("%w: service %q instance %q", ErrNotFound, name, id)
}

// sequentialOf reports whether child is id's sequential node name.
func sequentialOf(child, id string) bool {
	if len(child) != len(id)+10 || !strings.HasPrefix(child, id) {
		return false
	}
	for _, c := range child[len(id):] {
		if c < '0' || c > '9' {
			if c != '-' {
				return false
			}
		}
	}
	return true
}

// read reads and decodes one instance node, reporting a malformed one.
func (d *Discovery) read(ctx context.Context, path string) (Instance, error) {
	data, _, err := d.c.Get(ctx, path)
	if err != nil {
		return Instance{}, err
	}
	inst, err := Decode(data)
	if err != nil {
		d.malformed(path, err)
		return Instance{}, fmt.Errorf("discovery: %s: %w", path, err)
	}
	return inst, nil
}

// malformed reports an instance node that could not be decoded.
func (d *Discovery) malformed(path string, err error) {
	d.log.Warn("skipping a malformed service instance", zap.String("path", path), zap.Error(err))
	if d.bad != nil {
		d.bad.Add(context.Background(), 1)
	}
}

// Close closes the caches and providers made by this Discovery and
// unregisters its Dynamic and DynamicSequential instances (as Unregister);
// Static and Permanent instances stay registered (CURATOR-94). It returns
// the first error of those deletes (each goes on in the background).
// Calls after Close return ErrClosed; Close is idempotent.
func (d *Discovery) Close(ctx context.Context) error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.done.Store(true)
	regs := make([]*registration, 0, len(d.regs))
	for _, r := range d.regs {
		regs = append(regs, r)
	}
	d.regs = map[instanceKey]*registration{}
	closers := make([]func() error, 0, len(d.closers))
	for _, c := range d.closers {
		closers = append(closers, c)
	}
	d.closers = nil
	d.mu.Unlock()

	var errs []error
	for _, c := range closers {
		errs = append(errs, c())
	}
	for _, reg := range regs {
		reg.mu.Lock()
		if !reg.gone && reg.node != nil {
			reg.gone = true
			errs = append(errs, d.unregister(ctx, reg))
		}
		reg.gone = true
		reg.mu.Unlock()
	}
	return errors.Join(errs...)
}

// track remembers a cache or provider to close with the Discovery; false
// if the Discovery is closed.
func (d *Discovery) track(key any, closeFn func() error) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.closers[key] = closeFn
	return true
}

func (d *Discovery) untrack(key any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.closers, key)
}
