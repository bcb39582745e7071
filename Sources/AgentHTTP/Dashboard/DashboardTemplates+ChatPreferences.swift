extension DashboardTemplates {
    /// `/chat/preferences`: the logged-in user's chat preferences and the form that changes them.
    static let chatPreferences = """
    <h1>Chat preferences of {{user}}</h1>
    {{#error}}<p class="flash error" id="preferences-error">{{error}}</p>{{/error}}
    <p>Every chatbot adapter gets them with your messages (the llm adapter answers in your language and units).</p>
    <form method="post" action="/chat/preferences" id="preferences-form" class="filters">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <label>Language <input name="language" value="{{language}}" placeholder="en, fr-CA…" maxlength="35"></label>
    <label>Units <select name="units">{{#units}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/units}}</select></label>
    <label>Verbosity <select name="verbosity">{{#verbosity}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/verbosity}}</select></label>
    <label>Custom (JSON; a member set to null is removed) <textarea name="custom" rows="4">{{custom}}</textarea></label>
    <button>Save</button>
    </form>
    <p><a href="/chat">Back to the chat</a></p>

    """
}
