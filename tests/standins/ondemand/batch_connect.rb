# A stand-in for what Open OnDemand does with a batch-connect app, which cannot be installed here; only the parts
# tests/integration/test_ondemand.py needs, written (not copied) from OnDemand's own source:
#
# * staging (OSC/ondemand apps/dashboard/app/models/batch_connect/session.rb, `stage` and `render_erb_files`): the
#   app's template/ copied into the session's directory, modes kept (rsync -a), every *.erb rendered with ERB
#   (trim mode "-") in a binding where `context` answers the form's attributes and `session` is the session, and
#   renamed without its extension;
# * submit.yml.erb (apps/dashboard/app/models/batch_connect/app.rb, `submit_opts`): rendered with the form's
#   attributes and `staged_root` as plain names;
# * the job script (OSC/ood_core lib/ood_core/batch_connect/template.rb, `base_script` and `bash_helpers`, the
#   "basic" template of templates/basic.rb): cd into the session's directory; helpers find_port, port_used,
#   wait_until_port_used, create_passwd; host=$(hostname); before.sh sourced; script.sh forked (SCRIPT_PID);
#   after.sh sourced; connection.yml written with umask 077 from host, port, password and the conn_params; wait for
#   script.sh, then clean_up (clean.sh sourced, the children of script.sh and of the job script killed);
# * view.html.erb (apps/dashboard/app/controllers/batch_connect/sessions_controller.rb and its views): rendered with
#   ERB in the binding of an OpenStruct of connection.yml.
#
# Usage:
#   ruby batch_connect.rb stage APP_DIR STAGED_ROOT CONTEXT_JSON   prints the rendered submit.yml as JSON
#   ruby batch_connect.rb view APP_DIR CONNECTION_YML              prints the rendered view.html
require "erb"
require "fileutils"
require "json"
require "ostruct"
require "yaml"

def render(text, binding_)
  ERB.new(text, trim_mode: "-").result(binding_)
end

# What template files see: `session` and `context` (session.rb's TemplateBinding).
TemplateBinding = Struct.new(:session, :context) do
  def get_binding
    binding
  end
end

# The job script of the "basic" template for a session in work_dir (ood_core's Template#to_s, our own words).
def job_script(work_dir, conn_params)
  params = (conn_params.map(&:to_s) + %w[host port password]).uniq.join(" ")
  <<~BASH
    cd "#{work_dir}"
    export host
    export port

    create_yml () {
      echo "Generating connection YAML file..."
      (
        umask 077
        for name in #{params}; do echo "${name}: ${!name:-}"; done > "#{work_dir}/connection.yml"
      )
    }

    clean_up () {
      echo "Cleaning up..."
      [[ -e "#{work_dir}/clean.sh" ]] && source "#{work_dir}/clean.sh"
      [[ ${SCRIPT_PID:-} ]] && pkill -P "${SCRIPT_PID}" || :
      pkill -P $$
      exit "${1:-0}"
    }

    port_used () {
      local target=$1 host port
      host=${target%:*}; port=${target##*:}
      [[ "${host}" == "${target}" ]] && host=localhost
      (exec 3<>"/dev/tcp/${host}/${port}") 2>/dev/null
    }
    find_port () {
      local host=${1:-localhost} port
      for port in $(shuf -i "${2:-2000}-${3:-65535}"); do
        port_used "${host}:${port}" || { echo "${port}"; return 0; }
      done
      echo "error: no free port on ${host}" >&2
      return 1
    }
    wait_until_port_used () {
      local i
      for ((i = 0; i < ${2:-30} * 2; i++)); do
        port_used "$1" && return 0
        sleep 0.5
      done
      return 1
    }
    create_passwd () (
      set +o pipefail
      tr -cd 'a-zA-Z0-9' < /dev/urandom 2>/dev/null | head -c "${1:-8}"
    )

    host=$(hostname)

    [[ -e "#{work_dir}/before.sh" ]] && source "#{work_dir}/before.sh"

    echo "Script starting..."
    "#{work_dir}/script.sh" &
    SCRIPT_PID=$!

    [[ -e "#{work_dir}/after.sh" ]] && source "#{work_dir}/after.sh"

    create_yml

    wait "${SCRIPT_PID}" || clean_up 1

    clean_up
  BASH
end

def stage(app, staged, context_json)
  attributes = JSON.parse(File.read(context_json))
  FileUtils.mkdir_p(staged)
  FileUtils.cp_r(File.join(app, "template", "."), staged, preserve: true)
  context = OpenStruct.new(attributes)
  Dir.glob(File.join(staged, "**", "*.erb")).select { |f| File.file?(f) }.each do |file|
    rendered = render(File.read(file), TemplateBinding.new(nil, context).get_binding)
    target = file.delete_suffix(".erb")
    File.rename(file, target)  # keeps the mode (script.sh stays executable)
    File.write(target, rendered)
  end
  submit_context = OpenStruct.new(attributes.merge("staged_root" => staged))
  submit = YAML.safe_load(render(File.read(File.join(app, "submit.yml.erb")), submit_context.instance_eval { binding }))
  conn_params = submit.fetch("batch_connect", {}).fetch("conn_params", [])
  File.write(File.join(staged, "job_script_content.sh"), "#!/bin/bash\n" + job_script(staged, conn_params))
  puts JSON.generate(submit)
end

def view(app, connection)
  connect = OpenStruct.new(YAML.safe_load(File.read(connection)))
  puts render(File.read(File.join(app, "view.html.erb")), connect.instance_eval { binding })
end

case ARGV[0]
when "stage" then stage(ARGV[1], ARGV[2], ARGV[3])
when "view" then view(ARGV[1], ARGV[2])
else abort "usage: ruby batch_connect.rb stage APP STAGED CONTEXT_JSON | view APP CONNECTION_YML"
end
