package main

import (
	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/session"
)

// fitModel resolves the model in effect for a session that names
// sessionModel, whose file recorded the window recorded (0 when none),
// and its limits (modelLimits), then refuses a reserve or keep budget
// that does not fit its context window (fitWindow).
func (st *settings) fitModel(reg *compact.Registry, sessionModel string, recorded int) (info compact.ModelInfo, modelSource, windowSource string, err error) {
	info, modelSource, windowSource = st.modelLimits(reg, sessionModel, recorded)
	if err := st.fitWindow(info); err != nil {
		return info, "", "", err
	}
	return info, modelSource, windowSource, nil
}

// sizedSession is a session opened by a command that measures it against
// its model ("inspect", "report"): the settings in effect, the session at
// the leaf asked for, its context, and the model with its limits.
type sizedSession struct {
	st                        *settings
	s                         *session.Session
	ctx                       *compact.Context
	info                      compact.ModelInfo
	modelSource, windowSource string
}

// openSized loads the settings (with the limit flags of cmd), opens the
// session at file on leaf (the current leaf when empty) and resolves the
// model its context names, refusing budgets its window cannot hold.
func (a *app) openSized(cmd *cobra.Command, file, leaf string, lf *limitFlags) (*sizedSession, error) {
	st, err := a.loadSettings(cmd, lf)
	if err != nil {
		return nil, err
	}
	s, err := a.openRead(file, leaf)
	if err != nil {
		return nil, err
	}
	reg, err := compact.LoadRegistry()
	if err != nil {
		return nil, err
	}
	o := &sizedSession{st: st, s: s, ctx: s.Context()}
	o.info, o.modelSource, o.windowSource, err = st.fitModel(reg, o.ctx.Model, a.recorded[file])
	if err != nil {
		return nil, err
	}
	return o, nil
}

// summarySetup is what a command that summarizes ("run", "bench") reads
// before it opens a session: the settings, the model registry, the
// summarizer chosen and the trigger policy.
type summarySetup struct {
	st     *settings
	reg    *compact.Registry
	choice *summarizerChoice
	policy compact.Policy
}

// loadSummarySetup loads the settings (with the limit and summarizer
// flags of cmd), the registry, the summarizer choice and the policy.
func (a *app) loadSummarySetup(cmd *cobra.Command, lf *limitFlags, sf *summarizerFlags) (*summarySetup, error) {
	st, err := a.loadSettings(cmd, lf)
	if err != nil {
		return nil, err
	}
	reg, err := compact.LoadRegistry()
	if err != nil {
		return nil, err
	}
	choice, err := a.resolveSummarizer(cmd, st, sf, reg)
	if err != nil {
		return nil, err
	}
	policy, err := st.cfg.TriggerPolicy()
	if err != nil {
		return nil, err
	}
	return &summarySetup{st: st, reg: reg, choice: choice, policy: policy}, nil
}
